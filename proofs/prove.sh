#!/bin/bash
# make prove (docs/proofs.md): Frama-C/WP on the kernel code of each proof
# set named on the command line. A set SET is the file proofs/SET.args:
# one frama-c argument per line (blank lines and '#' lines ignored), the C
# files and the functions to prove; the WP command around it is the same for
# every set: -wp -wp-rte, provers cvc4 and z3 through why3, fixed timeout,
# no proof cache.
#
# Environment: PROVE_ROOT  the tree whose files are proved (default: here;
#                          tests/test_prove.py points it at a mutated copy)
#              PROVE_OUT   where logs and the why3 configuration go
#                          (default build/proofs)
#              PROVE_FCT   prove only these functions (comma-separated),
#                          instead of the set's -wp-fct list
#              PROVE_PROP  prove only the properties of these names
#                          (comma-separated, -wp-prop's syntax) instead of
#                          the set's own -wp-prop selection; with PROVE_FCT,
#                          one clause of one function (the mutants)
#              PROVE_EXTRA extra frama-c arguments
#              PROVE_JOBS  parallel prover processes (default 2)
#              PROVE_LEMMAS_ONLY  1: only the lemma pass of each set (below)
# Prints one line per set and `prove: proved N/M goals`; exits 1 unless every
# goal of every set is proved, 2 on a usage error.
#
# WP proves only the properties of the functions -wp-fct names, and an ACSL
# `lemma` belongs to no function: with -wp-fct it is a hypothesis of every
# goal and never a goal itself. So each set also gets a lemma pass: the same
# files and defines, no -wp-fct and no -wp-prop of its own, -wp-prop=@lemma.
# Its goals count with the set's (a lemma in a header is proved in every set
# whose files include it). PROVE_FCT (one function's proof, for the mutants)
# skips it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${PROVE_ROOT:-$here/..}" && pwd)
mkdir -p "${PROVE_OUT:-build/proofs}"
out=$(cd "${PROVE_OUT:-build/proofs}" && pwd)
timeout=20
provers=cvc4,z3

if [ $# -eq 0 ]; then
    echo "usage: proofs/prove.sh SET..." >&2
    exit 2
fi
for tool in frama-c why3 cvc4 z3; do
    command -v $tool >/dev/null || { echo "prove: $tool not installed (scripts/bootstrap.sh installs it)" >&2; exit 2; }
done

# A why3 configuration of our own, made afresh: the provers found on this
# machine, nothing taken from the user's ~/.why3.conf.
export WHY3CONFIG=$out/why3.conf
rm -f "$WHY3CONFIG"
why3 config detect >"$out/why3-detect.log" 2>&1 || { echo "prove: why3 config detect failed ($out/why3-detect.log)" >&2; exit 2; }

total=0
proved=0
status=0
for set in "$@"; do
    args=$here/$set.args
    if [ ! -f "$args" ]; then
        echo "prove: $args: no such proof set" >&2
        exit 2
    fi
    mapfile -t lines < <(grep -v -e '^[[:space:]]*$' -e '^[[:space:]]*#' "$args")
    if [ -n "${PROVE_FCT:-}" ]; then
        kept=()
        for ((i = 0; i < ${#lines[@]}; i++)); do
            if [ "${lines[i]}" = -wp-fct ]; then i=$((i + 1)); else kept+=("${lines[i]}"); fi
        done
        lines=("${kept[@]}" -wp-fct "$PROVE_FCT")
    fi
    if [ -n "${PROVE_PROP:-}" ]; then
        # Repeated -wp-prop options select the union of their properties:
        # the set's own selection is replaced, not added to.
        kept=()
        for l in "${lines[@]}"; do
            case "$l" in -wp-prop=*) ;; *) kept+=("$l") ;; esac
        done
        lines=("${kept[@]}" "-wp-prop=$PROVE_PROP")
    fi
    log=$out/$set.log
    if [ "${PROVE_LEMMAS_ONLY:-}" = 1 ]; then
        echo "[wp] Proved goals:    0 / 0" >"$log"      # the set's own goals not run
        rc=0
    else
        # shellcheck disable=SC2086 # PROVE_EXTRA is a list of arguments
        (cd "$root" && frama-c "${lines[@]}" -wp -wp-rte -wp-prover $provers -wp-timeout $timeout \
            -wp-par "${PROVE_JOBS:-2}" -wp-cache none -wp-session "$out/$set.session" \
            ${PROVE_EXTRA:-}) >"$log" 2>&1
        rc=$?
    fi
    if [ -z "${PROVE_FCT:-}" ]; then
        lemma_args=()
        for ((i = 0; i < ${#lines[@]}; i++)); do
            case "${lines[i]}" in
                -wp-fct) i=$((i + 1)) ;;
                -wp-prop=*) ;;
                *) lemma_args+=("${lines[i]}") ;;
            esac
        done
        lemma_log=$out/$set.lemmas.log
        # shellcheck disable=SC2086
        (cd "$root" && frama-c "${lemma_args[@]}" -wp -wp-prop=@lemma -wp-prover $provers \
            -wp-timeout $timeout -wp-par "${PROVE_JOBS:-2}" -wp-cache none ${PROVE_EXTRA:-}) >"$lemma_log" 2>&1
        lrc=$?
        lline=$(grep -E '^\[wp\] Proved goals: +[0-9]+ / [0-9]+' "$lemma_log" | tail -1)
        if [ -n "$lline" ]; then
            ln=$(echo "$lline" | sed -E 's/.*: +([0-9]+) \/ ([0-9]+).*/\1/')
            lm=$(echo "$lline" | sed -E 's/.*: +([0-9]+) \/ ([0-9]+).*/\2/')
        elif [ $lrc -eq 0 ] && grep -q -e 'No goal generated' -e 'No proof obligations' "$lemma_log"; then
            ln=0; lm=0
        else
            echo "prove: $set: the lemma pass stopped (exit $lrc); see $lemma_log" >&2
            grep -E 'Error|error' "$lemma_log" | head -5 >&2
            ln=0; lm=1; status=1
        fi
        if [ "$ln" -ne "$lm" ]; then
            grep -E '^\[wp\] \[(Failed|Unknown|Timeout)' "$lemma_log" | sed 's/^/  /' >&2
            status=1
        fi
    else
        ln=0; lm=0
    fi
    line=$(grep -E '^\[wp\] Proved goals: +[0-9]+ / [0-9]+' "$log" | tail -1)
    if [ -z "$line" ]; then
        echo "prove: $set: frama-c stopped (exit $rc) before proving; see $log" >&2
        grep -E 'Error|error' "$log" | head -5 >&2
        status=1
        continue
    fi
    n=$(echo "$line" | sed -E 's/.*: +([0-9]+) \/ ([0-9]+).*/\1/')
    m=$(echo "$line" | sed -E 's/.*: +([0-9]+) \/ ([0-9]+).*/\2/')
    proved=$((proved + n + ln))
    total=$((total + m + lm))
    if [ "$lm" -gt 0 ]; then
        echo "prove: $set: $((n + ln))/$((m + lm)) goals, of them lemmas $ln/$lm ($log, $lemma_log)"
    else
        echo "prove: $set: $n/$m goals ($log)"
    fi
    if [ "$n" -ne "$m" ] || [ $rc -ne 0 ]; then
        grep -E '^\[wp\] \[(Failed|Unknown|Timeout)' "$log" | sed 's/^/  /' >&2
        status=1
    fi
done
echo "prove: proved $proved/$total goals"
exit $status
