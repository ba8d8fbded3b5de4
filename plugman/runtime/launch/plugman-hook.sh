#!/bin/sh
# plugman-hook AGENT EVENT HOOK-ID: the direct form of `plugman hooks exec AGENT EVENT HOOK-ID`
# (plugman.runtime.launch.shplan). It finds the project as plugman does (the physical working
# folder and its parents: plugman.toml, .mcp.json or .git) and sources the hook's sh plan in
# plugman's state folder when there is one: the plan checks its stamp with shell builtins and
# execs the handler, or returns. Anything else runs the full launcher with the same words.
# Installed beside `plugman` (the wheel's shared scripts); plugman writes no copy of it.
_plugman_hook_full() {
  if [ -x "${0%/*}/plugman" ] && [ "${0%/*}" != "$0" ]; then
    exec "${0%/*}/plugman" hooks exec "$@"
  fi
  exec plugman hooks exec "$@"
}
[ $# -eq 3 ] || _plugman_hook_full "$@"
case /$1/$2/$3/ in
  *//* | /*/*/*/*/*) _plugman_hook_full "$@" ;;
esac
_plugman_pwd=$PWD
if cd -P . 2>/dev/null; then
  _plugman_dir=$PWD
  PWD=$_plugman_pwd
  _plugman_project=$_plugman_dir
  while :; do
    if [ -e "$_plugman_project/plugman.toml" ] || [ -e "$_plugman_project/.mcp.json" ] ||
      [ -e "$_plugman_project/.git" ]; then
      break
    fi
    if [ -z "$_plugman_project" ]; then
      _plugman_project=$_plugman_dir
      break
    fi
    _plugman_project=${_plugman_project%/*}
  done
  if [ -n "${PLUGMAN_HOME-}" ]; then
    _plugman_state=$PLUGMAN_HOME/state
  else
    _plugman_state=${XDG_STATE_HOME:-${HOME-}/.local/state}/plugman
  fi
  _plugman_plan=$_plugman_state/plans/sh$_plugman_project/$1.$2.$3.sh
  if [ -f "$_plugman_plan" ]; then
    . "$_plugman_plan"
  fi
fi
_plugman_hook_full "$@"
