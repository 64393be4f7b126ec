# Prints make test's step times from build/test-steps.log (a line "started SECONDS", then one
# "STEP SECONDS" per finished step), each with its budget, and the total; exits 1, naming each
# step over its budget and the total if it is over its own. Variables: budgets ("step=minutes
# ..."), total_budget (minutes), factor (multiplies every budget).
function clock(seconds) { return sprintf("%d:%02d", seconds / 60, seconds % 60) }
BEGIN {
    count = split(budgets, pairs, " ")
    for (i = 1; i <= count; i++) {
        split(pairs[i], pair, "=")
        budget[pair[1]] = pair[2] * 60 * factor
    }
    total_budget *= 60 * factor
}
NR == 1 { start = $2; last = $2; next }
{
    took = $2 - last
    last = $2
    over = ($1 in budget) && took > budget[$1]
    printf "  %-20s %7s   budget %5s%s\n", $1, clock(took), ($1 in budget) ? clock(budget[$1]) : "-", over ? "   OVER" : ""
    if (over) failures = failures sprintf("make test: step %s took %s, over its budget of %s (STEP_BUDGET_%s in the Makefile)\n", $1, clock(took), clock(budget[$1]), $1)
}
END {
    took = last - start
    over = total_budget > 0 && took > total_budget
    printf "  %-20s %7s   budget %5s%s\n", "make test", clock(took), clock(total_budget), over ? "   OVER" : ""
    if (over) failures = failures sprintf("make test: the run took %s, over its budget of %s (TEST_BUDGET in the Makefile)\n", clock(took), clock(total_budget))
    if (failures != "") {
        printf "%s", failures > "/dev/stderr"
        printf "make test: find what made the step slower (a new test, a slower build), or raise its budget with the measurement that justifies it; on a slower machine, BUDGET_FACTOR=2 scales every budget\n" > "/dev/stderr"
        exit 1
    }
}
