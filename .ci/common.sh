# Shared by .ci/run and .ci/demo: install what VAST needs (Debian 12 packages, as root) and
# build it. Sourced; defines vast_setup and vast_build.
set -euo pipefail
VAST_PACKAGES="build-essential cmake pkg-config python3 python3-pyopencl python3-numpy libclang-19-dev opencl-headers ocl-icd-opencl-dev \
pocl-opencl-icd libcmocka-dev libmcpp-dev clinfo bc"

vast_setup() {
    local missing=""
    for p in $VAST_PACKAGES; do
        dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        echo "== installing:$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
}

# vast_build DIR [cmake options...]
vast_build() {
    local dir=$1
    shift
    cmake -S . -B "$dir" -DVAST_WERROR=ON "$@" >/dev/null
    if ! cmake --build "$dir" -j"$(nproc)" >"$dir/build.log" 2>&1; then
        grep -E -B2 -A8 "error|warning" "$dir/build.log" | head -80
        echo "build of $dir failed (whole log: $dir/build.log)"
        return 1
    fi
}
