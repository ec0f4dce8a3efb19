#!/bin/sh
# tests/hil/client/check_no_dependencies.sh NM LIBRARY: fails if the client library needs any
# symbol beyond memcpy/memset (no malloc, no stdio, nothing else of the project). Symbols
# starting with __ belong to the compiler and sanitizer runtimes and are ignored.
nm_tool=$1
lib=$2
extra=$("$nm_tool" -u "$lib" | awk '{print $NF}' |
        grep -v -e '^__' -e '^memcpy$' -e '^memset$' -e ':$' -e '^$')
if [ -n "$extra" ]; then
  echo "$lib needs symbols beyond memcpy/memset:"
  echo "$extra"
  exit 1
fi
echo "$lib: no dependencies beyond memcpy/memset"
