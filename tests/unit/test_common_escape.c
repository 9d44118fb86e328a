// SPDX-License-Identifier: Apache-2.0
/* Escaping of outside text (common/escape.c): control characters, escape
 * sequences, bidirectional overrides and invalid UTF-8 (a malformed input
 * of every kind: stray continuation bytes, truncated, overlong and
 * surrogate sequences, beyond U+10FFFF) never come out raw; valid text
 * comes out unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/escape.h"

static void check(const char *in, bool controls, const char *want) {
  char *got = iob_escape_text(in, controls);
  assert_string_equal(got, want);
  assert_int_equal(iob_text_needs_escape(in, controls), strcmp(in ? in : "", want) != 0);
  free(got);
}

static void test_escape(void **state) {
  (void)state;
  /* unchanged */
  check(NULL, true, "");
  check("", true, "");
  check("batch/fio-1.2 --rw=write", true, "batch/fio-1.2 --rw=write");
  check("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\xb3", true,
        "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\xb3");
  /* terminal controls: CSI, OSC (window title), BEL, CR, newline, DEL */
  check("a\x1b[2Jb", true, "a\\x1b[2Jb");
  check("\x1b]0;pwned\x07", true, "\\x1b]0;pwned\\x07");
  check("x\ry\nz\tw\x7f", true, "x\\x0dy\\x0az\\x09w\\x7f");
  /* C1 (U+009B is an 8-bit CSI) and bidi overrides/isolates */
  check("\xc2\x9b"
        "2J",
        true, "\\u009b2J");
  check("a\xe2\x80\xae"
        "b\xe2\x81\xa6"
        "c",
        true, "a\\u202eb\\u2066c");
  /* the backslash itself, so that escaped text is not ambiguous */
  check("a\\x1b", true, "a\\\\x1b");
  /* invalid UTF-8 */
  check("\x80", true, "\\x80");
  check("a\xc3", true, "a\\xc3"); /* truncated at the end */
  check("\xe6\x97"
        "x",
        true, "\\xe6\\x97x");                              /* truncated in the middle */
  check("\xc0\xaf", true, "\\xc0\\xaf");                   /* overlong '/' */
  check("\xe0\x80\xaf", true, "\\xe0\\x80\\xaf");          /* overlong, 3 bytes */
  check("\xed\xa0\x80", true, "\\xed\\xa0\\x80");          /* a surrogate */
  check("\xf4\x90\x80\x80", true, "\\xf4\\x90\\x80\\x80"); /* beyond U+10FFFF */
  check("\xff\xfe", true, "\\xff\\xfe");
  /* JSON mode: only what is not UTF-8; controls and backslashes are
   * jansson's to escape */
  check("a\x1b[2J\\b", false, "a\x1b[2J\\b");
  check("a\xc3", false, "a\\xc3");
  check("\xc2\x9b", false, "\xc2\x9b");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_escape),
  };
  return cmocka_run_group_tests_name("escape", tests, NULL, NULL);
}
