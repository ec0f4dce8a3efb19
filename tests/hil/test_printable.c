/* tests/hil/test_printable.c: hil_printable, which every message that echoes outside text
 * (a board's HELLO name and ERROR text, a CSV header in noise-fit) goes through. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hil/error.h"
#include "support/skip.h"

static void expect(const char *in, size_t out_sz, const char *want) {
  char out[256];
  memset(out, '#', sizeof out);
  assert_true(out_sz <= sizeof out);
  hil_printable(out, out_sz, in);
  assert_string_equal(out, want);
}

static void test_text_and_utf8_pass(void **state) {
  (void)state;
  expect("club arm v1.2", 64, "club arm v1.2");
  expect("bras \xc3\xa0 \xe2\x82\xac \xf0\x9f\xa4\x96", 64, "bras \xc3\xa0 \xe2\x82\xac \xf0\x9f\xa4\x96");
  expect("", 64, "");
}

static void test_terminal_controls_are_shown_not_sent(void **state) {
  (void)state;
  expect("\x1b[2J\x1b]0;owned\x07", 64, "\\x1b[2J\\x1b]0;owned\\x07"); /* ESC, BEL */
  expect("a\rb\nc\td\x7f", 64, "a\\x0db\\x0ac\\x09d\\x7f");             /* CR LF TAB DEL */
  expect("\xc2\x9b" "31m", 64, "\\x9b31m"); /* C1 CSI encoded as UTF-8 */
  expect("\x9b" "31m", 64, "\\x9b31m");     /* and raw */
}

static void test_bytes_that_are_not_utf8(void **state) {
  (void)state;
  expect("a\xff\xfe" "b", 64, "a\\xff\\xfeb");
  expect("\xc3(", 64, "\\xc3(");        /* a lead byte without its continuation */
  expect("\xe2\x82", 64, "\\xe2\\x82"); /* a sequence cut by the end */
  expect("\xc0\xaf", 64, "\\xc0\\xaf"); /* overlong forms */
  expect("\xe0\x80\xaf", 64, "\\xe0\\x80\\xaf");
  expect("\xed\xa0\x80", 64, "\\xed\\xa0\\x80"); /* a surrogate */
  expect("\xf4\x90\x80\x80", 64, "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
}

static void test_cut_short_at_a_whole_character(void **state) {
  (void)state;
  expect("abcdef", 4, "abc");
  expect("ab\x1b", 5, "ab");             /* \x1b needs 4 bytes: not half of it */
  expect("a\xe2\x82\xac", 4, "a");       /* nor half of a 3-byte character */
  expect("a\xe2\x82\xac", 5, "a\xe2\x82\xac");
  char one[1] = {'#'};
  hil_printable(one, 1, "text");
  assert_int_equal(one[0], '\0');
}

TS_MAIN(test_text_and_utf8_pass, test_terminal_controls_are_shown_not_sent,
        test_bytes_that_are_not_utf8, test_cut_short_at_a_whole_character)
