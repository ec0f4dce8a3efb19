# tests/tools/pty_link.sh: sourced by the scripts that run `achilles run --pty-link DIR/arm` in
# the background and drive the link.
#
# wait_for_link DIR LOG PID: waits up to 60 s for DIR/arm; when it does not appear, prints LOG
# (achilles's standard error), stops PID, removes DIR and exits 1.
wait_for_link() {
  i=0
  while [ ! -e "$1/arm" ] && [ $i -lt 600 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  if [ ! -e "$1/arm" ]; then
    echo "achilles run made no $1/arm within 60 s:"; cat "$2"
    kill "$3"; rm -rf "$1"; exit 1
  fi
}
