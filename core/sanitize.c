/* Built into every program of a -DCISOLVE_SANITIZE=ON build (CMakeLists.txt), read by the
 * sanitizer runtimes at start: stop at the first report, with a stack, and check for leaks at
 * exit. A report ends the program with exit code 99, which no test expects (bad-input tests
 * expect 1). The environment (ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS) still overrides
 * them. */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

const char *__asan_default_options(void) {
  return "halt_on_error=1:exitcode=99:detect_leaks=1:strict_string_checks=1:"
         "detect_stack_use_after_return=1:check_initialization_order=1";
}

const char *__ubsan_default_options(void) {
  return "halt_on_error=1:exitcode=99:print_stacktrace=1";
}
