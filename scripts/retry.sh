# Sourced by the scripts that install packages: retry COMMAND... runs it up to three times.
# A mirror or PyPI that fails once (a reset connection, a mirror mid-sync) is tried twice more.
retry() {
    local n
    for n in 1 2 3; do
        "$@" && return 0
        [ "$n" = 3 ] || { echo "${0##*/}: $1 failed; again in $((n * 10)) s" >&2; sleep $((n * 10)); }
    done
    return 1
}
