/* Built into every program of a -DCISOLVE_SANITIZE=ON build (CMakeLists.txt), read by the
 * sanitizer runtimes at start: stop at the first report, with a stack, and check for leaks at
 * exit (but for HDF5's own blocks, below). A report ends the program with exit code 99, which
 * no test expects (bad-input tests expect 1). The environment (ASAN_OPTIONS, UBSAN_OPTIONS,
 * LSAN_OPTIONS) still overrides them. */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__lsan_default_suppressions(void);

const char *__asan_default_options(void) {
  return "halt_on_error=1:exitcode=99:detect_leaks=1:strict_string_checks=1:"
         "detect_stack_use_after_return=1:check_initialization_order=1";
}

const char *__ubsan_default_options(void) {
  return "halt_on_error=1:exitcode=99:print_stacktrace=1";
}

/* libhdf5 keeps a block it allocated for a file whose open failed (a corrupt input.h5, as the
 * mutation test makes them) and frees it only in its own clean-up at exit, which cisolve turns
 * off (io/files.h cis_io_init). Memory HDF5 allocates stays HDF5's: a handle cisolve forgot to
 * close is not reported either, which the tests' own checks of HDF5's open objects cover. */
const char *__lsan_default_suppressions(void) { return "leak:libhdf5\n"; }
