#!/usr/bin/env bash
# Prepares .gpu/ (ignored by git) for bench/gpu_session.sh, here, without a GPU: this build's
# fuserc, libfuserc.so and GPU test binaries, the shared tools and corpus, the independent
# launcher's packages (prep.py) for the corpus graphs without library steps, and graphs of its
# own (batch norms over few long rows). Then the device tool carries .gpu:
#
#   bench/gpu_session_prep.sh [--shared ../shared]      # here; BUILD_DIR=build by default
#   run(command="bash bench/gpu_session.sh", carry=[".gpu"], timeout_s=590)   # the device tool
set -euo pipefail
cd "$(dirname "$0")/.."
shared=../shared
[ "${1:-}" = "--shared" ] && shared=$2
B=${BUILD_DIR:-build}
G=.gpu
grep -qx '/.gpu/' .gitignore .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
rm -rf "$G"
mkdir -p "$G/bin" "$G/graphs" "$G/cache"
cp "$B/cmd/fuserc" "$B/runtime/libfuserc.so" "$B/tests/fuserc_gpu_tests" "$G/bin/"
# Shared libraries the device machine may lack (it is not Debian): copied beside the binaries.
for lib in $(ldd "$B/cmd/fuserc" "$B/runtime/libfuserc.so" | awk '/=> \//{print $3}' |
             grep -E 'xxhash|curl|nghttp|psl|ssh|rtmp|idn2|brotli|zstd|gssapi|krb5|ldap|sasl|unistring|lber' | sort -u); do
  cp -L "$lib" "$G/bin/"
done
cp -r "$shared/tools" "$G/tools"
cp -r "$shared/corpus" "$G/corpus"
# Batch norms in training over few long rows (issue 26): the corpus's, with 8 channels.
sed 's/\b64\b/8/g' "$shared/corpus/batchnorm_train_fwd_f32.json" > "$G/graphs/batchnorm_train_c8_f32.json"
# The independent launcher takes kernels only: the corpus graphs without library steps.
mkdir -p "$G/kernel_graphs"
for f in "$shared"/corpus/*.json; do
  grep -q '"op": *"\(matmul\|linear\|conv\|scaled_dot_product_attention\)"' "$f" || cp "$f" "$G/kernel_graphs/"
done
/usr/bin/python3 "$G/tools/gpu/prep.py" --fuserc "$B/cmd/fuserc" --out "$G/pkgs" "$G/kernel_graphs" > "$G/prep.log"
tail -1 "$G/prep.log"
du -sh "$G"
