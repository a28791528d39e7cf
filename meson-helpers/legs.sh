# The legs of the test scripts (test-all, test-newer-wlroots), sourced by them:
# each `step` is timed, skips are recorded with their reasons, and the summary
# of both is printed when the script exits, also when a step failed.
#
# Under CI (CI=true; .ci/run sets it) a leg may not skip, unless its reason is
# on CARREL_LEG_SKIP_ALLOWLIST below; a pytest run's skips follow the same rule
# (Tests/integration/skip_policy.py). docs/TESTING.md lists both lists.
#
# State lives in $CARREL_LEGS_DIR (one file per leg: NNN.leg, NNN.skips), so a
# script run by another (test-newer-wlroots by test-all) adds its legs to the
# same summary.

carrel_under_ci() {
  case "$(tr '[:upper:]' '[:lower:]' <<<"${CI:-}")" in true|1|yes) return 0 ;; esac
  return 1
}

# Script-level skips allowed under CI: KEY|WHY. Reviewed like the pytest list.
CARREL_LEG_SKIP_ALLOWLIST=(
  "tsan-runtime-absent|the Swift toolchain ships without ThreadSanitizer's runtime (libclang_rt.tsan); a toolchain's runtime is not the project's to install, and the AddressSanitizer leg still runs"
  "newer-wlroots-sources-absent|the newer wlroots stacks build from upstream tarballs that are not in the repository nor in any Debian bookworm package; a checkout with no third_party folder beside it cannot build them, and the summary names the leg as not run"
)

# carrel_legs_init DIR: starts a fresh record in DIR and prints the summary at
# exit. Run by another script that keeps the record (CARREL_LEGS_DIR set), it
# adds its legs to that one and leaves the summary to it.
carrel_legs_init() {
  if [ -n "${CARREL_LEGS_DIR:-}" ] && [ -d "$CARREL_LEGS_DIR" ]; then
    carrel_legs_summarise=false
  else
    export CARREL_LEGS_DIR="$1"
    rm -rf "$CARREL_LEGS_DIR"
    mkdir -p "$CARREL_LEGS_DIR"
    carrel_legs_summarise=true
  fi
  carrel_legs_started=$(date +%s)
  trap 'carrel_legs_exit' EXIT
}

carrel_leg_current=""
carrel_leg_started=0
carrel_leg_cpu0=""

# carrel_cpu_sample: the machine's busy and total CPU time so far (jiffies
# from /proc/stat's first line, "busy total"); a leg's share of busy cores is
# the difference over its run. Machine-wide, so a leg run beside another
# counts both: it says whether a leg left cores idle that another could use.
carrel_cpu_sample() {
  local _ user nice system idle iowait irq softirq steal rest
  read -r _ user nice system idle iowait irq softirq steal rest </proc/stat || { echo "0 0"; return; }
  local busy=$(( user + nice + system + irq + softirq + steal ))
  echo "$busy $(( busy + idle + iowait ))"
}

# carrel_cpu_share "BUSY0 TOTAL0": the percentage of the machine's CPU time
# that was busy since that sample.
carrel_cpu_share() {
  local b0 t0 b1 t1
  read -r b0 t0 <<<"$1"
  read -r b1 t1 <<<"$(carrel_cpu_sample)"
  if [ $(( t1 - t0 )) -gt 0 ]; then echo $(( 100 * (b1 - b0) / (t1 - t0) )); else echo "?"; fi
}
carrel_legs_cleanup=()  # paths removed at exit

# step NAME...: ends the running leg (as passed) and starts the next one. A
# pytest run in this leg records its skips in $CARREL_SKIP_LOG.
step() {
  carrel_leg_end ok
  echo
  echo "==> $*"
  local n
  n=$(find "$CARREL_LEGS_DIR" -maxdepth 1 -name '*.leg' | wc -l)
  carrel_leg_current="$CARREL_LEGS_DIR/$(printf '%03d' "$n")"
  printf 'name=%s\n' "$*" >"$carrel_leg_current.leg"
  carrel_leg_started=$(date +%s)
  carrel_leg_cpu0="$(carrel_cpu_sample)"
  export CARREL_SKIP_LOG="$carrel_leg_current.skips"
}

# carrel_leg_end STATUS: records the running leg's status and wall time.
carrel_leg_end() {
  [ -n "$carrel_leg_current" ] || return 0
  local secs=$(( $(date +%s) - carrel_leg_started ))
  local status="$1"
  # A leg that said it skipped keeps that status.
  grep -q '^status=' "$carrel_leg_current.leg" 2>/dev/null || printf 'status=%s\n' "$status" >>"$carrel_leg_current.leg"
  printf 'secs=%s\ncpu=%s\n' "$secs" "$(carrel_cpu_share "$carrel_leg_cpu0")" >>"$carrel_leg_current.leg"
  echo "--- ${secs}s: $(sed -n 's/^name=//p' "$carrel_leg_current.leg")"
  carrel_leg_current=""
  unset CARREL_SKIP_LOG
}

# carrel_leg_skip KEY REASON: the running leg skips. Under CI that fails
# (returns 1; with set -e the script stops) unless KEY is on the allow-list.
carrel_leg_skip() {
  local key="$1" reason="$2" entry why=""
  for entry in "${CARREL_LEG_SKIP_ALLOWLIST[@]}"; do
    [ "${entry%%|*}" = "$key" ] && why="${entry#*|}"
  done
  if [ -n "$why" ]; then
    echo "skipped (allowed: $why): $reason" >&2
    printf 'status=skipped (allowed)\n' >>"$carrel_leg_current.leg"
    printf 'allowed: %s\t%s\t%s\n' "$why" "(leg)" "$reason" >>"$carrel_leg_current.skips"
  elif carrel_under_ci; then
    echo "FAILED: under CI this leg may not skip ($key is not on the allow-list in meson-helpers/legs.sh): $reason" >&2
    printf 'FAILED under CI\t%s\t%s\n' "(leg)" "$reason" >>"$carrel_leg_current.skips"
    return 1
  else
    echo "skipped: $reason" >&2
    printf 'status=skipped\n' >>"$carrel_leg_current.leg"
    printf 'skipped\t%s\t%s\n' "(leg)" "$reason" >>"$carrel_leg_current.skips"
  fi
}

# carrel_leg_beside NAME -- COMMAND...: starts a leg that runs beside the
# legs after it, until carrel_leg_join. For a leg that leaves cores idle (the
# seat's guests wait on screens and serial lines) beside legs that use them
# (builds); never beside an integration suite, whose bounded waits would then
# measure this leg's load. Its output goes to a log, printed when it is joined.
carrel_leg_beside_current=""
carrel_leg_beside_pid=""
carrel_leg_beside() {
  local name="$1" n
  shift
  [ "${1:-}" = "--" ] && shift
  n=$(find "$CARREL_LEGS_DIR" -maxdepth 1 -name '*.leg' | wc -l)
  carrel_leg_beside_current="$CARREL_LEGS_DIR/$(printf '%03d' "$n")"
  printf 'name=%s (beside the legs after it)\n' "$name" >"$carrel_leg_beside_current.leg"
  carrel_leg_beside_started=$(date +%s)
  carrel_leg_beside_cpu0="$(carrel_cpu_sample)"
  echo
  echo "==> $name: runs beside the next legs; its output follows when it ends"
  # A session of its own, so that a failure elsewhere can end all of it
  # (QEMU included) at exit.
  CARREL_SKIP_LOG="$carrel_leg_beside_current.skips" setsid "$@" >"$carrel_leg_beside_current.log" 2>&1 </dev/null &
  carrel_leg_beside_pid=$!
}

# carrel_leg_join: waits for the leg carrel_leg_beside started, prints its
# output, records its status and wall time; returns its exit status.
carrel_leg_join() {
  [ -n "$carrel_leg_beside_pid" ] || return 0
  local rc=0 name secs
  wait "$carrel_leg_beside_pid" || rc=$?
  carrel_leg_beside_pid=""
  secs=$(( $(date +%s) - carrel_leg_beside_started ))
  name="$(sed -n 's/^name=//p' "$carrel_leg_beside_current.leg")"
  echo
  echo "==> $name: its output"
  cat "$carrel_leg_beside_current.log"
  if [ "$rc" -eq 0 ]; then printf 'status=ok\n' >>"$carrel_leg_beside_current.leg"
  else printf 'status=FAILED\n' >>"$carrel_leg_beside_current.leg"; fi
  printf 'secs=%s\ncpu=%s\n' "$secs" "$(carrel_cpu_share "$carrel_leg_beside_cpu0")" >>"$carrel_leg_beside_current.leg"
  echo "--- ${secs}s: $name"
  carrel_leg_beside_current=""
  return "$rc"
}

carrel_legs_exit() {
  local rc=$? p
  if [ "$rc" -eq 0 ]; then carrel_leg_end ok; else carrel_leg_end FAILED; fi
  # A leg still running beside (a step failed before it was joined) ends here,
  # its whole session; what it printed so far is shown.
  if [ -n "$carrel_leg_beside_pid" ]; then
    kill -TERM -- "-$carrel_leg_beside_pid" 2>/dev/null || true
    carrel_leg_join || true
  fi
  if [ "$carrel_legs_summarise" = true ]; then carrel_legs_summary "$rc" || true; fi
  for p in "${carrel_legs_cleanup[@]}"; do rm -rf "$p"; done
  return "$rc"
}

carrel_legs_summary() {
  local rc="$1" leg name status secs cpu skips count=0 total=0
  echo
  echo "==> legs (wall time; cpu: how busy the machine's cores were meanwhile, every process counted)"
  for leg in "$CARREL_LEGS_DIR"/*.leg; do
    [ -e "$leg" ] || continue
    name="$(sed -n 's/^name=//p' "$leg")"
    status="$(sed -n 's/^status=//p' "$leg" | head -n1)"
    secs="$(sed -n 's/^secs=//p' "$leg" | head -n1)"
    cpu="$(sed -n 's/^cpu=//p' "$leg" | head -n1)"
    # A leg of a script that exited without ending it (a failed sub-script).
    [ -n "$status" ] || status=FAILED
    printf '  %-18s %6ss  cpu %3s%%  %s\n' "$status" "${secs:-?}" "${cpu:-?}" "$name"
    total=$(( total + ${secs:-0} ))
  done
  printf '  %-18s %6ss            (all legs; those beside others counted twice)\n' "" "$total"
  echo
  echo "==> skips (with their reasons)"
  for leg in "$CARREL_LEGS_DIR"/*.leg; do
    skips="${leg%.leg}.skips"
    [ -s "$skips" ] || continue
    echo "  in: $(sed -n 's/^name=//p' "$leg")"
    while IFS=$'\t' read -r status name secs; do
      count=$(( count + 1 ))
      printf '    %s\n      %s\n      [%s]\n' "$name" "$secs" "$status"
    done <"$skips"
  done
  [ "$count" -gt 0 ] || echo "  none"
  echo
  if [ "$rc" -eq 0 ]; then
    echo "$(basename "$0"): no step failed, in $(( $(date +%s) - carrel_legs_started ))s ($count skips, listed above)"
  else
    echo "$(basename "$0"): FAILED (exit $rc) after $(( $(date +%s) - carrel_legs_started ))s"
  fi
}
