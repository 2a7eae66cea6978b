#!/bin/bash
# samples/bench/run.sh: the benchmark harness (issue 7). Runs every sample of a size preset in
# every configuration that matters, keeps each run's stdout and stderr, appends one raw CSV row
# per run (parsed here with awk: the GPU machine may lack python), then calls report.py for
# results.csv, results.md and results.png. See samples/README.md, "Benchmark harness".
#
# usage: samples/bench/run.sh --build DIR --out DIR [options]
#   --build DIR         build folder: samples in DIR/samples/<name>
#   --out DIR           results folder (created; runs append to DIR/raw.csv)
#   --libvast PATH      libvast.so (default DIR/libvast.so, else DIR/icd/libvast.so)
#   --platform NAME     the real (vendor) platform, name substring (default "Portable";
#                       "NVIDIA CUDA" on the GPU machine). VAST wraps it (VAST_BACKEND)
#   --cpu-platform NAME the CPU baseline platform (default "Portable Computing Language")
#   --preset NAME|FILE  sizes: tiny, small, large, paper, sweep (samples/bench/presets/NAME.txt)
#                       or a file
#   --sweep             = --preset sweep: saxpy and MatrixMul at ~1, 8, 64 GiB and above the GPU
#   --samples A,B       only these samples of the preset (default: all of it)
#   --part K/M          only the K-th of M contiguous groups of the preset's lines (to split a
#                       long run into several commands that share one --out)
#   --configs A,B       native,vast-direct,vast-paged,vast-2x,vast-4x,expert,cpu (default: all;
#                       expert exists for the samples that offer --partitioned: EXPERT_SAMPLES)
#   --repeats N         timed runs per sample, configuration and cache mode (default 3)
#   --warmup W          untimed runs before them, rows marked warmup=yes (default 1)
#   --caches LIST       warm (default), cold, vastwarm, comma-separated: the compiler caches a run
#                       sees (CUDA_CACHE_PATH, POCL_CACHE_DIR, VAST_CACHE_DIR): warm: one folder
#                       per configuration, filled by its warm-up; cold: new empty folders for
#                       every run; vastwarm: NVIDIA's and PoCL's cold, VAST's warm
#   --host-max BYTES    host memory a run may need (default: MemTotal); larger sizes: SKIPPED
#   --timeout S         wall-clock limit per run (default 600)
#   --deadline S        stop starting runs S seconds after the start; the rest become SKIPPED
#                       rows, and a run's limit is cut to the time left (default: none)
#   --expert-div K      the expert's device footprint is at most data/K (default 4, as vast-4x)
#   --native-max BYTES  largest data run natively (default: the device's CL_DEVICE_GLOBAL_MEM_SIZE
#                       from clinfo; unknown: always try)
#   --pcie-gbs R        pinned PCIe rate for the bound, GB/s (default 54.9, FACTS.md)
#   --no-report         only run and append raw rows
# Configurations (one row each, never dropped: failures and refusals carry their reason):
#   native       the real platform directly (only when the data fits the device)
#   vast-direct  through VAST (ICD mode), default budget
#   vast-paged   through VAST with VAST_FORCE_PAGED=1 (data resident: page-lookup overhead)
#   vast-2x/-4x  through VAST with VAST_DEVICE_MEMORY = data/2, data/4 (oversubscribed)
#   expert       --partitioned --chunk C on the real platform, C sized to data/expert-div
#   cpu          the CPU platform (the paper's baseline)
# ICD mode sets OCL_ICD_FILENAMES=libvast.so (Khronos loader, e.g. CUDA's) and OCL_ICD_VENDORS=
# a folder holding vast.icd (ocl-icd 2.3.1 of Debian 12 ignores OCL_ICD_FILENAMES), selects the
# platform "VAST" and checks that the run landed there. VAST runs set VAST_STATS=1 and
# VAST_BACKEND=<--platform> unless VAST_BACKEND is set; VAST_FORCE_PAGED and VAST_DEVICE_MEMORY
# are set only by their configurations; other VAST_* and POCL_* pass through, except the cache
# folders, which --caches sets.
# Order: round r (warm-ups first, then repeats) runs the samples and, within each, the
# configurations rotated by r and reversed in odd rounds (rotation alone would keep each
# configuration's predecessor), so that none always follows the same one (meta.txt: order).
# Exit: 0 when every run was made and recorded (whatever its status), 2 usage error.
set -u
set -f   # sample arguments are split on blanks, never globbed
here=$(dirname "$(readlink -f "$0")")

build="" out="" libvast="" real="Portable" cpu="Portable Computing Language" preset="small"
only_samples="" configs="native,vast-direct,vast-paged,vast-2x,vast-4x,expert,cpu"
run_timeout=600 deadline=0 expert_div=4 native_max="" pcie_gbs=54.9 do_report=1
repeats=3 warmup=1 caches=warm part="" host_max=""
EXPERT_SAMPLES="saxpy MatrixMul vecadd BlackScholes SpMV Reduction MersenneTwister"
invocation=$(printf '%q ' "$0" "$@")
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --libvast) libvast="$2"; shift 2 ;;
    --platform) real="$2"; shift 2 ;;
    --cpu-platform) cpu="$2"; shift 2 ;;
    --preset) preset="$2"; shift 2 ;;
    --samples) only_samples="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    --timeout) run_timeout="$2"; shift 2 ;;
    --deadline) deadline="$2"; shift 2 ;;
    --expert-div) expert_div="$2"; shift 2 ;;
    --native-max) native_max="$2"; shift 2 ;;
    --pcie-gbs) pcie_gbs="$2"; shift 2 ;;
    --no-report) do_report=0; shift ;;
    --sweep) preset=sweep; shift ;;
    --part) part="$2"; shift 2 ;;
    --repeats) repeats="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --caches) caches="$2"; shift 2 ;;
    --host-max) host_max="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
die() { echo "run.sh: $*" >&2; exit 2; }
if [ -z "$build" ] || [ ! -d "$build/samples" ]; then die "--build: no samples/ in '$build'"; fi
[ -n "$out" ] || die "--out is required"
build=$(readlink -f "$build")
if [ -z "$libvast" ]; then
    for c in "$build/libvast.so" "$build/icd/libvast.so"; do [ -f "$c" ] && { libvast=$c; break; }; done
fi
case "$preset" in */*|*.txt) preset_file=$preset ;; *) preset_file=$here/presets/$preset.txt ;; esac
[ -f "$preset_file" ] || die "no preset '$preset' ($preset_file)"
for c in ${configs//,/ }; do
    case "$c" in native|vast-direct|vast-paged|vast-2x|vast-4x|expert|cpu) ;;
    *) die "unknown configuration '$c'" ;; esac
done
for m in ${caches//,/ }; do
    case "$m" in warm|cold|vastwarm) ;; *) die "unknown cache mode '$m' (warm, cold, vastwarm)" ;; esac
done
[ -n "${caches//,/}" ] || die "--caches: empty"
part_k=1 part_m=1
if [ -n "$part" ]; then
    [[ "$part" =~ ^([0-9]+)/([0-9]+)$ ]] || die "--part K/M: '$part'"
    part_k=${BASH_REMATCH[1]} part_m=${BASH_REMATCH[2]}
    [ "$part_m" -ge 1 ] && [ "$part_k" -ge 1 ] && [ "$part_k" -le "$part_m" ] || die "--part K/M: 1 <= K <= M"
fi
[ -n "$host_max" ] || host_max=$(awk '/MemTotal/ {printf "%.0f", $2 * 1024}' /proc/meminfo)
for v in "$run_timeout" "$deadline" "$expert_div" "$repeats" "$warmup" "$host_max"; do
    [[ "$v" =~ ^[0-9]+$ ]] || die "not a whole number: '$v'"
done
[ "$expert_div" -ge 1 ] || die "--expert-div must be at least 1"
[ "$repeats" -ge 1 ] || die "--repeats must be at least 1"
mkdir -p "$out/logs" || die "cannot create '$out'"
out=$(readlink -f "$out")

# The preset: "sample args..." per line, '#' comments.
# "skip=CONFIG,..." on a line makes those rows SKIPPED (e.g. cpu where it would take hours).
declare -a plan_names plan_args plan_skip
while read -r name rest; do
    [ -z "$name" ] || [[ "$name" == \#* ]] && continue
    if [ -n "$only_samples" ] && [[ ",$only_samples," != *",$name,"* ]]; then continue; fi
    a="" k=""
    for w in ${rest%%#*}; do
        if [[ "$w" == skip=* ]]; then k+="${k:+,}${w#skip=}"; else a+="${a:+ }$w"; fi
    done
    plan_names+=("$name"); plan_args+=("$a"); plan_skip+=("$k")
done < "$preset_file"
for s in ${only_samples//,/ }; do
    [[ " ${plan_names[*]} " == *" $s "* ]] || die "sample '$s' is not in preset $preset_file"
done
[ "${#plan_names[@]}" -gt 0 ] || die "nothing to run"
if [ "$part_m" -gt 1 ]; then  # contiguous groups, sizes differing by at most one line
    total=${#plan_names[@]}
    lo=$(( (part_k - 1) * total / part_m )) hi=$(( part_k * total / part_m ))
    plan_names=("${plan_names[@]:lo:hi-lo}") plan_args=("${plan_args[@]:lo:hi-lo}")
    plan_skip=("${plan_skip[@]:lo:hi-lo}")
    [ "${#plan_names[@]}" -gt 0 ] || die "--part $part: no preset line in this part"
fi

# VAST in ICD mode: a vendors folder for ocl-icd, the library path for the Khronos loader.
icd_dir=$out/vendors
if [ -n "$libvast" ] && [ -f "$libvast" ]; then
    libvast=$(readlink -f "$libvast")
    mkdir -p "$icd_dir" && echo "$libvast" > "$icd_dir/vast.icd"
fi

# The real device, from clinfo --raw (optional): name, driver, memory.
dev_name="" dev_driver="" dev_mem="" dev_alloc="" platform_version=""
if command -v clinfo >/dev/null 2>&1; then
    eval "$(env -u OCL_ICD_FILENAMES -u LD_PRELOAD clinfo --raw 2>/dev/null | awk -v want="$real" '
        function val(line) { sub(/^\[[^]]*\][ \t]*[A-Z_0-9]+[ \t]*/, "", line); return line }
        function q(s) { gsub(/\047/, "", s); return "\047" s "\047" }
        $1 ~ /^\[/ && $2 == "CL_PLATFORM_NAME" && prefix == "" {
            v = val($0)
            if (index(tolower(v), tolower(want))) { split($1, p, "/"); prefix = p[1] "/0]" }
        }
        prefix != "" && $1 == prefix {
            if ($2 == "CL_DEVICE_NAME" && name == "") name = val($0)
            if ($2 == "CL_DRIVER_VERSION" && drv == "") drv = val($0)
            if ($2 == "CL_DEVICE_GLOBAL_MEM_SIZE" && mem == "") mem = val($0)
            if ($2 == "CL_DEVICE_MAX_MEM_ALLOC_SIZE" && alloc == "") alloc = val($0)
            if ($2 == "CL_DEVICE_VERSION" && ver == "") ver = val($0)
        }
        END { printf "dev_name=%s dev_driver=%s dev_mem=%s dev_alloc=%s platform_version=%s\n",
              q(name), q(drv), q(mem + 0 > 0 ? sprintf("%.0f", mem) : ""), q(alloc), q(ver) }')"
fi
[ -n "$native_max" ] || native_max=$dev_mem

# Metadata for the report (the latest invocation wins; commands.txt keeps them all).
vast_version=$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(hostname) ($(uname -srm); $(nproc) cores; $(awk '/MemTotal/ {printf "%.0f GiB RAM", $2 / 1048576}' /proc/meminfo))"
    echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
    echo "platform: $real${platform_version:+ ($platform_version)}"
    echo "device: ${dev_name:-unknown}"
    echo "driver: ${dev_driver:-unknown}"
    echo "device_memory: ${dev_mem:-unknown}"
    echo "max_alloc: ${dev_alloc:-unknown}"
    echo "cpu_platform: $cpu"
    echo "libvast: ${libvast:-none} (VAST $vast_version)"
    echo "preset: $preset_file"
    echo "pcie_gbs: $pcie_gbs"
    echo "repeats: $repeats (after $warmup warm-up)"
    echo "caches: $caches"
    echo "host_max: $host_max"
    [ "$part_m" -gt 1 ] && echo "part: $part_k/$part_m (${plan_names[*]})"
    echo "vast_env: $(env | grep -E '^(VAST|POCL)_' | grep -vE '^VAST_(FORCE_PAGED|DEVICE_MEMORY|STATS|SAMPLE_PLATFORM)=' | sort | tr '\n' ' ')"
    echo "invocation: $invocation"
} > "$out/meta.txt"
echo "# $(date -u '+%F %T') $invocation" >> "$out/commands.txt"

cols=(sample size_args config cache repeat warmup round seq args env platform_arg status reason rc
      wall_s time_s hash data_bytes in_bytes out_bytes budget_bytes platform device modes launches partitions faults retries h2d_bytes
      d2h_bytes h2d_transfers d2h_transfers hits misses evictions dirty_evictions pool_budget_bytes
      page_bytes inspector_s plan_s transfer_s kernel_s vast_total_s stdout stderr command)
raw=$out/raw.csv
header_line=$(IFS=,; echo "${cols[*]}")
if [ -s "$raw" ] && [ "$(head -1 "$raw")" != "$header_line" ]; then
    die "$raw has other columns (an older harness): use a new --out folder"
fi
[ -s "$raw" ] || echo "$header_line" > "$raw"

csvq() { local s=${1//$'\n'/ }; s=${s//\"/\"\"}; printf '"%s"' "$s"; }
declare -A row
emit_row() {
    local line="" c
    for c in "${cols[@]}"; do line+="${line:+,}$(csvq "${row[$c]:-}")"; done
    echo "$line" >> "$raw"
    printf '%-16s %-12s %-8s %-6s %10s s  %s\n' "${row[sample]}" "${row[config]}" "${row[cache]}" \
        "$([ "${row[warmup]}" = yes ] && echo "w${row[repeat]}" || echo "r${row[repeat]}")" "${row[time_s]:--}" \
        "${row[status]}${row[reason]:+: ${row[reason]}}"
}

# Bytes that must cross the bus in the timed region: inputs written, outputs read. From the
# sample's first lines (its header and "data:"); see samples/README.md for the table.
io_bytes() { # io_bytes SAMPLE DATA HEADER -> "in out"
    awk -v s="$1" -v d="$2" -v h="$3" 'BEGIN {
        n = split(h, w, /[ =,(]+/)
        if (s == "vecadd") { i = d * 2 / 3; o = d / 3 }
        else if (s == "saxpy") { i = d; o = d / 2 }
        else if (s == "BlackScholes") { i = d * 3 / 5; o = d * 2 / 5 }
        else if (s == "MersenneTwister") { i = 4096 * 16; o = d }
        else if (s == "Reduction") { for (k = 1; k < n; k++) if (w[k + 1] == "work-groups") g = w[k]; i = d; o = g * 4 }
        else if (s == "SpMV") { o = w[2] * 4; i = d - o }
        else if (s == "MatrixMul") {
            for (k = 1; k < n; k++) { if (w[k] == "n") nn = w[k + 1]; if (w[k] == "rows") m = w[k + 1] }
            if (m == "") m = nn
            i = (m * nn + nn * nn) * 4; o = m * nn * 4 }
        else if (s ~ /^(FDTD3d|MedianFilter|SobelFilter|NBody)$/) { i = d / 2; o = d / 2 }
        else { i = d; o = 0 }
        printf "%.0f %.0f\n", i, o }'
}

# The expert's --chunk for a footprint of at most BUDGET bytes, or "" when it cannot fit.
expert_chunk() { # expert_chunk SAMPLE BUDGET HEADER
    awk -v s="$1" -v b="$2" -v h="$3" 'BEGIN {
        n = split(h, w, /[ =,(]+/)
        for (k = 1; k < n; k++) { if (w[k] == "n") nn = w[k + 1]; if (w[k] == "rows") m = w[k + 1] }
        if (s == "saxpy") c = int(b / 16)                                  # 2 queues x (x, y)
        else if (s == "MatrixMul") c = int((b - nn * nn * 4) / (16 * nn) / 16) * 16  # B + 2 x (A, C rows)
        else if (s == "vecadd") c = int(b / 24)                            # 2 x (a, b, c)
        else if (s == "BlackScholes") c = int(b / 40)                      # 2 x (S, X, T, call, put)
        else if (s == "SpMV") c = int((b - w[4] * 4) / (2 * (w[5] * 8 + 4)))   # x + 2 x (vals, cols, y rows)
        else if (s == "Reduction") { g = 0; for (k = 1; k < n; k++) if (w[k + 1] == "work-groups") g = w[k]
            grid = 512 * g; c = int((b - 8 * g) / 8 / grid) * grid }       # 2 x (input, partials), whole grids
        else if (s == "MersenneTwister") {                                 # 2 x (uniforms, normals), whole units
            per = w[3] / 4096; u = 64 * per; a = u; m = 65536; while (m) { t = a % m; a = m; m = t }
            unit = u / a * 65536; c = int(b / 16 / unit) * unit }
        if (c >= 1) printf "%d\n", c }'
}

# Host memory a run needs: the sample's own arrays (every sample keeps about its data on the
# host), plus a second copy where the device's buffers live in host memory too: VAST's backing
# stores (vast-*), PoCL's CPU device (cpu).
host_need() { # host_need SAMPLE CONFIG DATA
    awk -v c="$2" -v d="$3" 'BEGIN { printf "%.0f\n", d * (c ~ /^(vast-|cpu$)/ ? 2 : 1) }'
}

# The compiler caches a run sees: cenv (env assignments) and cache_tmp (a folder to remove).
cache_env() { # cache_env MODE CONFIG
    local base
    cache_tmp=""
    case "$1" in
    warm)
        base=$out/cache/warm/$2
        mkdir -p "$base/cuda" "$base/pocl" "$base/vast"
        cenv=(CUDA_CACHE_PATH="$base/cuda" POCL_CACHE_DIR="$base/pocl" VAST_CACHE_DIR="$base/vast") ;;
    cold|vastwarm)
        mkdir -p "$out/cache"
        cache_tmp=$(mktemp -d "$out/cache/cold.XXXXXX")
        mkdir -p "$cache_tmp/cuda" "$cache_tmp/pocl" "$cache_tmp/vast"
        cenv=(CUDA_CACHE_PATH="$cache_tmp/cuda" POCL_CACHE_DIR="$cache_tmp/pocl" VAST_CACHE_DIR="$cache_tmp/vast")
        if [ "$1" = vastwarm ]; then
            base=$out/cache/vastwarm/$2/vast
            mkdir -p "$base"
            cenv[2]=VAST_CACHE_DIR=$base
        fi ;;
    esac
    # NVIDIA's cache: its default 256 MiB could evict within one warm run; disabling it would
    # make the warm rows cold.
    cenv+=(CUDA_CACHE_MAXSIZE=4294967296)
}

# Parse one run's stdout and stderr into "key<TAB>value" lines.
parse_run() { # parse_run STDOUT STDERR
    awk '
    function kv(line,   n, t, i, k) { # key=value tokens; a token without "=" continues the value
        delete F; n = split(line, t, / +/); k = ""
        for (i = 1; i <= n; i++) {
            if (t[i] ~ /^[A-Za-z_0-9]+=/) { k = substr(t[i], 1, index(t[i], "=") - 1); F[k] = substr(t[i], index(t[i], "=") + 1) }
            else if (k != "") F[k] = F[k] " " t[i]
        }
    }
    function add(key, v) { if (v != "") { S[key] += v; seen[key] = 1 } }
    function addmode(m) { if (m != "" && index("," modes ",", "," m ",") == 0) modes = modes (modes == "" ? "" : ",") m }
    FNR == 1 { file++ }
    file == 1 && /^time: / { time = $2 }
    file == 1 && /^hash: / { hash = $2 }
    file == 1 && /^(PASS|FAIL)$/ { verdict = $1 }
    file == 1 && /^data: / { data = $2 }
    file == 1 && /^platform: / && platform == "" { platform = substr($0, 11) }
    file == 1 && /^device: / && device == "" { device = substr($0, 9) }
    file == 1 && /^mismatch: / && mismatch == "" { mismatch = $0 }
    file == 2 && /[Ee]rror/ && err == "" && !/^vast: stats:/ { err = $0 }
    file == 2 && /^vast: error: / && verr == "" { vast_error = 1; verr = $0 }
    file == 2 && /CL_OUT_OF_RESOURCES/ { out_of_resources = 1 }
    file == 2 && /^vast: stats: / {
        line = substr($0, 14)
        if (line ~ /(^| )kernel=/) {               # key=value kernel line
            kv(line); m = F["mode"]; l = F["launches"]
            if (l == "" || l + 0 > 0) addmode(m)
            if (m == "refused") refused = 1
            add("launches", F["launches"]); add("partitions", F["partitions"]); add("faults", F["faults"])
            add("retries", F["retries"]); add("k_h2d", F["h2d_bytes"]); add("k_d2h", F["d2h_bytes"])
            add("inspector_s", F["inspector_s"]); add("plan_s", F["plan_s"]); add("transfer_s", F["transfer_s"])
            add("kernel_s", F["kernel_s"]); add("vast_total_s", F["total_s"])
        } else if (line ~ /(^| )pool=/) {          # key=value pool line
            kv(line); pools++
            add("h2d_bytes", F["h2d_bytes"]); add("d2h_bytes", F["d2h_bytes"])
            add("h2d_transfers", F["h2d_transfers"]); add("d2h_transfers", F["d2h_transfers"])
            add("hits", F["hits"]); add("misses", F["misses"]); add("evictions", F["evictions"])
            add("dirty_evictions", F["dirty_evictions"]); add("pool_budget_bytes", F["budget_bytes"])
            if (F["page_bytes"] != "") page = F["page_bytes"]
        } else if (line ~ /^page cache of /) {     # the older prose form
            pools++
            if (match(line, /: [0-9]+ MiB, [0-9]+ KiB pages/)) { split(substr(line, RSTART + 2, RLENGTH), p, / /); add("pool_budget_bytes", p[1] * 1048576); page = p[3] * 1024 }
            if (match(line, /host->device [0-9]+ transfers [0-9.]+ MiB/)) { split(substr(line, RSTART, RLENGTH), p, / /); add("h2d_transfers", p[2]); add("h2d_bytes", int(p[4] * 1048576)) }
            if (match(line, /device->host [0-9]+ transfers [0-9.]+ MiB/)) { split(substr(line, RSTART, RLENGTH), p, / /); add("d2h_transfers", p[2]); add("d2h_bytes", int(p[4] * 1048576)) }
            if (match(line, /page hits [0-9]+, misses [0-9]+/)) { split(substr(line, RSTART, RLENGTH), p, /[ ,]+/); add("hits", p[3]); add("misses", p[5]) }
            if (match(line, /evictions [0-9]+ \([0-9]+ dirty/)) { split(substr(line, RSTART, RLENGTH), p, /[ (]+/); add("evictions", p[2]); add("dirty_evictions", p[3]) }
        } else {                                   # the older column form: name mode launches seconds
            n = split(line, t, / +/)
            if (n >= 4 && t[n - 2] != "mode" && t[n - 1] ~ /^[0-9]+$/) {
                if (t[n - 1] + 0 > 0) addmode(t[n - 2])
                if (t[n - 2] == "refused") refused = 1
                add("launches", t[n - 1]); add("kernel_s", t[n])
            }
        }
    }
    END {
        if (!seen["h2d_bytes"] && seen["k_h2d"]) { S["h2d_bytes"] = S["k_h2d"]; seen["h2d_bytes"] = 1 }
        if (!seen["d2h_bytes"] && seen["k_d2h"]) { S["d2h_bytes"] = S["k_d2h"]; seen["d2h_bytes"] = 1 }
        printf "time_s\t%s\nhash\t%s\nverdict\t%s\ndata_bytes\t%s\nplatform\t%s\ndevice\t%s\n", time, hash, verdict, data, platform, device
        if (vast_error && out_of_resources) refused = 1   # VAST declined the launch, and said why
        printf "verr\t%s\n", verr
        printf "mismatch\t%s\nerr\t%s\nmodes\t%s\nrefused\t%s\npage_bytes\t%s\n", mismatch, err, modes, refused, page
        split("launches partitions faults retries h2d_bytes d2h_bytes h2d_transfers d2h_transfers hits misses evictions dirty_evictions pool_budget_bytes", K, " ")
        for (i = 1; i in K; i++) if (seen[K[i]]) printf "%s\t%.0f\n", K[i], S[K[i]]
        split("inspector_s plan_s transfer_s kernel_s vast_total_s", K, " ")
        for (i = 1; i in K; i++) if (seen[K[i]]) printf "%s\t%.6f\n", K[i], S[K[i]]
    }' "$1" "$2"
}

t_start=$(date +%s)
elapsed() { echo $(( $(date +%s) - t_start )); }

run_one() { # run_one SAMPLE CONFIG BIN ARGS(string) DATA IN OUT HEADER SKIPS CACHE ROUND
    local sample=$1 config=$2 bin=$3 args=$4 data=$5 in=$6 outb=$7 header=$8 skips=$9 cache=${10} round=${11}
    local -a envs=(env -u LD_PRELOAD -u VAST_SAMPLE_PLATFORM -u VAST_FORCE_PAGED -u VAST_DEVICE_MEMORY
                   -u CUDA_CACHE_DISABLE)
    local plat="" budget="" extra="" shown_env="" warm=no need rep=$((round - warmup + 1))
    [ "$round" -lt "$warmup" ] && { warm=yes; rep=$((round + 1)); }
    seq=$((seq + 1))
    row=([sample]=$sample [size_args]=$args [config]=$config [cache]=$cache [repeat]=$rep [warmup]=$warm
         [round]=$((round + 1)) [seq]=$seq [args]=$args [data_bytes]=$data [in_bytes]=$in [out_bytes]=$outb)
    case "$config" in
    native|expert|cpu)
        envs+=(-u OCL_ICD_FILENAMES -u VAST_STATS)
        plat=$real; [ "$config" = cpu ] && plat=$cpu ;;
    vast-*)
        plat=VAST
        shown_env="VAST_STATS=1 VAST_BACKEND=${VAST_BACKEND:-$real}"
        envs+=(OCL_ICD_FILENAMES="$libvast" OCL_ICD_VENDORS="$icd_dir" VAST_STATS=1 VAST_BACKEND="${VAST_BACKEND:-$real}") ;;
    esac
    case "$config" in
    vast-paged) envs+=(VAST_FORCE_PAGED=1); shown_env+=" VAST_FORCE_PAGED=1" ;;
    vast-2x|vast-4x)
        budget=$(awk -v d="$data" -v k="${config#vast-}" 'BEGIN { printf "%.0f", d / (k + 0) }')
        envs+=(VAST_DEVICE_MEMORY="$budget"); shown_env+=" VAST_DEVICE_MEMORY=$budget" ;;
    esac
    row[env]=$shown_env row[platform_arg]=$plat row[budget_bytes]=$budget
    local slug=${args//[^A-Za-z0-9.-]/_} rtag
    [ "$warm" = yes ] && rtag=w$rep || rtag=r$rep
    row[stdout]=logs/$sample.$slug.$config.$cache.$rtag.stdout row[stderr]=logs/$sample.$slug.$config.$cache.$rtag.stderr

    # Rows that are not run still say why.
    local skip=""
    if [[ ",$skips," == *",$config,"* ]]; then skip="skipped by the preset (skip=$skips in $(basename "$preset_file"))"
    elif [ ! -x "$bin" ]; then skip="sample not built: $bin"
    elif [ -z "$data" ]; then skip="probe failed: no 'data:' line from $bin $args"
    elif need=$(host_need "$sample" "$config" "$data"); awk -v n="$need" -v m="$host_max" 'BEGIN { exit !(n > 0.95 * m) }'; then
        skip="needs ~$need B of host memory, over 95% of the host's $host_max B (--host-max)"
    elif [[ "$config" == vast-* ]] && { [ -z "$libvast" ] || [ ! -f "$libvast" ]; }; then
        skip="libvast.so not found ('$libvast'; --libvast)"
    elif [ "$config" = native ] && [ -n "$native_max" ] && awk -v d="$data" -v m="$native_max" 'BEGIN { exit !(d > m) }'; then
        skip="data $data B exceeds the device's $native_max B"
    elif [ "$config" = expert ]; then
        budget=$(awk -v d="$data" -v k="$expert_div" 'BEGIN { printf "%.0f", d / k }')
        row[budget_bytes]=$budget
        local chunk; chunk=$(expert_chunk "$sample" "$budget" "$header")
        if [ -z "$chunk" ]; then skip="no partition of $sample fits data/$expert_div = $budget B"
        else extra="--partitioned --chunk $chunk"; row[args]="$args $extra"; fi
    fi
    local left=$run_timeout
    if [ -z "$skip" ] && [ "$deadline" -gt 0 ]; then
        left=$(( deadline - $(elapsed) ))
        if [ "$left" -lt 1 ]; then skip="harness deadline ($deadline s) reached"
        elif [ "$left" -gt "$run_timeout" ]; then left=$run_timeout; fi
    fi
    if [ -n "$skip" ]; then
        row[status]=SKIPPED row[reason]=$skip row[stdout]="" row[stderr]=""
        emit_row; return
    fi

    local so=$out/${row[stdout]} se=$out/${row[stderr]}
    cache_env "$cache" "$config"
    # shellcheck disable=SC2206
    local -a cmd=("${envs[@]}" "${cenv[@]}" timeout -k 10 "$left" "$bin" --platform "$plat" $args $extra)
    row[command]=$(printf '%q ' "${cmd[@]}")
    echo "${row[command]}" >> "$out/commands.txt"
    local t0 t1 rc
    t0=$(date +%s.%N)
    (cd "$out" && "${cmd[@]}" > "$so" 2> "$se")
    rc=$?
    t1=$(date +%s.%N)
    [ -n "$cache_tmp" ] && rm -rf "$cache_tmp"
    row[rc]=$rc row[wall_s]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    local k v
    declare -A p=()
    while IFS=$'\t' read -r k v; do p[$k]=$v; done < <(parse_run "$so" "$se")
    for k in time_s hash platform device modes launches partitions faults retries h2d_bytes d2h_bytes \
             h2d_transfers d2h_transfers hits misses evictions dirty_evictions pool_budget_bytes page_bytes \
             inspector_s plan_s transfer_s kernel_s vast_total_s; do
        row[$k]=${p[$k]:-}
    done
    [ -n "${p[data_bytes]:-}" ] && row[data_bytes]=${p[data_bytes]}

    local status reason=""
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then status=TIMEOUT; reason="timed out after $left s"
    elif [ "$rc" -eq 0 ] && [ "${p[verdict]}" = PASS ] && [ -n "${p[hash]}" ]; then status=PASS
    elif [ "$rc" -eq 1 ] || [ "${p[verdict]}" = FAIL ]; then   # VAST's own error first: the cause
        status=FAIL; reason=${p[verr]:-${p[mismatch]:-${p[err]:-wrong result}}}
    elif [[ "$config" == vast-* ]] && [ -n "${p[refused]}" ]; then status=REFUSED; reason=${p[err]:-a launch was refused}
    elif [ "$rc" -gt 128 ]; then status=ERROR; reason="killed by signal $((rc - 128))${p[err]:+: ${p[err]}}"
    else status=ERROR; reason=${p[err]:-exit code $rc}; [ "$rc" -eq 0 ] && reason="no PASS/hash line"
    fi
    # Prove where it ran: VAST configurations on VAST, the others not.
    if [ "$status" = PASS ] || [ "$status" = FAIL ]; then
        local pl=${p[platform]} dv=${p[device]}
        if [[ "$config" == vast-* ]] && { [[ "$pl" != VAST* ]] || [[ "$dv" != VAST:* ]]; }; then
            status=ERROR reason="not running through VAST (platform '$pl', device '$dv')"
        elif [[ "$config" != vast-* ]] && { [[ "$pl" == *VAST* ]] || [[ "$dv" == VAST* ]]; }; then
            status=ERROR reason="landed on VAST (platform '$pl', device '$dv')"
        fi
    fi
    row[status]=$status row[reason]=$reason
    emit_row
}

# The probe: every sample prints its header and "data:" before choosing a device.
declare -a plan_data plan_header plan_in plan_out
for i in "${!plan_names[@]}"; do
    bin=$build/samples/${plan_names[$i]} args=${plan_args[$i]}
    plan_data[i]="" plan_header[i]="" plan_in[i]="" plan_out[i]=""
    [ -x "$bin" ] || continue
    # shellcheck disable=SC2086
    probe=$(env -u LD_PRELOAD -u OCL_ICD_FILENAMES -u VAST_SAMPLE_PLATFORM timeout 120 \
            "$bin" --platform __vast_bench_probe__ $args 2>/dev/null)
    plan_header[i]=$(echo "$probe" | head -1)
    plan_data[i]=$(echo "$probe" | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
    [ -n "${plan_data[i]}" ] && read -r "plan_in[i]" "plan_out[i]" < <(io_bytes "${plan_names[$i]}" "${plan_data[i]}" "${plan_header[i]}")
done

# Round r: samples rotated by r; configurations rotated by r, reversed when r is odd.
IFS=, read -ra cfg_list <<< "$configs"
rounds=$((warmup + repeats)) nS=${#plan_names[@]} nC=${#cfg_list[@]} seq=0
round_configs() { # round_configs R -> the configurations of round R, in order
    local q list=()
    for ((q = 0; q < nC; q++)); do list+=("${cfg_list[(q + $1) % nC]}"); done
    if (( $1 % 2 )); then for ((q = nC - 1; q >= 0; q--)); do echo "${list[q]}"; done
    else printf '%s\n' "${list[@]}"; fi
}
{
    echo "order: cache modes in turn ($caches); in each, $warmup warm-up round(s) then $repeats timed; round r runs the samples rotated by r and each sample's configurations rotated by r, reversed when r is odd:"
    for ((r = 0; r < rounds; r++)); do
        echo "order_round_$((r + 1)): $( ((r < warmup)) && echo warm-up || echo timed): samples $(for ((j = 0; j < nS; j++)); do printf '%s ' "${plan_names[(j + r) % nS]}"; done)| configs $(round_configs "$r" | tr '\n' ' ')"
    done
} >> "$out/meta.txt"

printf '%-16s %-12s %-8s %-6s %12s  %s\n' sample config cache run time status
for mode in ${caches//,/ }; do
    for ((r = 0; r < rounds; r++)); do
        mapfile -t order < <(round_configs "$r")
        for ((j = 0; j < nS; j++)); do
            i=$(( (j + r) % nS ))
            sample=${plan_names[$i]}
            for config in "${order[@]}"; do
                [ "$config" = expert ] && [[ " $EXPERT_SAMPLES " != *" $sample "* ]] && continue
                run_one "$sample" "$config" "$build/samples/$sample" "${plan_args[$i]}" "${plan_data[$i]}" \
                    "${plan_in[$i]}" "${plan_out[$i]}" "${plan_header[$i]}" "${plan_skip[$i]}" "$mode" "$r"
            done
        done
    done
done

if [ "$do_report" = 1 ]; then
    if command -v python3 >/dev/null 2>&1; then
        python3 "$here/report.py" --pcie-gbs "$pcie_gbs" --out "$out" "$out" ||
            echo "run.sh: the report step failed; rerun: python3 $here/report.py --out $out $out" >&2
    else
        echo "run.sh: python3 not found: no report here; elsewhere run: python3 samples/bench/report.py --out DIR DIR" >&2
    fi
fi
exit 0
