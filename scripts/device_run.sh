#!/usr/bin/env bash
# The default tier on an accelerator, one backend after another, as one prepared command for a
# machine that is lent for minutes: each backend's results are complete and saved before the
# next one starts, so a run cut short by the machine's time limit still brings back whole
# results for the backends that finished.
#
#   scripts/device_run.sh OUTDIR [DEVICE] [BACKENDS] [-- run_tests.py options]
#
# DEVICE defaults to cuda, BACKENDS to aot_eager,inductor (the cheap one first). Each backend's
# results.json, summary.md and console log land in OUTDIR/<backend>/ (a missing backend means
# its run did not finish). The machine's own torch is used. Where that Python lacks the suite's
# small dependencies (expecttest, parameterized, pytest and its plugins), put their wheels for
# that Python in a folder named by WHEELS: they are installed into a private target first.
# BACKEND_SECONDS (default 420) bounds each backend's run; JOBS (default: cores - 2) sets -j.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

positional=()
while (( $# )) && [[ $1 != -- ]]; do positional+=("$1"); shift; done
(( $# )) && shift
out=${positional[0]:?usage: scripts/device_run.sh OUTDIR [DEVICE] [BACKENDS] [-- run_tests.py options]}
device=${positional[1]:-cuda}
backends=${positional[2]:-aot_eager,inductor}

if [[ -n ${WHEELS:-} ]]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/suite-site "$WHEELS"/*.whl || exit 2
    export PYTHONPATH=/tmp/suite-site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/suite-inductor-cache}
jobs=${JOBS:-$(( $(nproc) > 3 ? $(nproc) - 2 : 1 ))}

python3 -c 'import torch; print("torch", torch.__version__, "| device:",
    torch.cuda.get_device_name() if torch.cuda.is_available() else "no cuda")'
status=0
IFS=, read -ra names <<< "$backends"
for backend in "${names[@]}"; do
    mkdir -p "$out/$backend"
    report=$(mktemp -d)
    timeout --signal=TERM --kill-after=20 "${BACKEND_SECONDS:-420}" \
        python3 run_tests.py --device "$device" --backend "$backend" -j "$jobs" \
        --report-dir "$report" "$@" > "$out/$backend/console.log" 2>&1
    code=$?
    echo "$backend: exit $code"
    tail -n 25 "$out/$backend/console.log"
    cp "$report"/results.json "$report"/summary.md "$out/$backend/" 2> /dev/null
    (( code > status )) && status=$code
done
exit "$status"
