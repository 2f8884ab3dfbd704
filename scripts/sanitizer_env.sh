# Sourced (bash): the run-time options of the sanitizer build (-DFUSERC_SANITIZE=ON) for every
# process started afterwards.   source scripts/sanitizer_env.sh [REPORT_DIR]
# With REPORT_DIR, reports go to files REPORT_DIR/asan.PID and ubsan.PID rather than to stderr,
# so that a report from a process whose failure a test expected is still seen
# (scripts/test_sanitized.sh fails on any file there).
_fuserc_san_log=${1:+:log_path=$1/asan}
_fuserc_san_ulog=${1:+:log_path=$1/ubsan}
# detect_leaks: LeakSanitizer at exit (forked NVRTC workers too).
# verify_asan_link_order=0: the compile_pipeline test preloads its fake clock (an uninstrumented
#   shim that intercepts no allocation) in front of the runtime.
# allocator_may_return_null=0, abort_on_error=0: a report ends the process with status 1.
export ASAN_OPTIONS="detect_leaks=1:verify_asan_link_order=0:strict_string_checks=1:check_initialization_order=1${_fuserc_san_log}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${_fuserc_san_ulog}"
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan.supp"
unset _fuserc_san_log _fuserc_san_ulog
