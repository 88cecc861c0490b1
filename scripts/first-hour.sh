#!/usr/bin/env bash
# first-hour.sh — walk a newcomer's first hour against a real `make run`, timing each step:
#
#   1. make run     a fresh clone (git clone of this repository into a temp folder; --here uses
#                   this checkout), `make run` in the background on free ports, until its
#                   "make run: listening" line
#   2. console      GET /admin/ answers 200 with the console app
#   3. tokens       the local binary's `token` command (what `make token` prints)
#   4. install      the admin installs the seeded "Demo OAuth upstream" (oauth_per_user) over
#                   REST and consents for the connection, as the console's Install does
#   5. connect      the member's first tools/call of its whoami tool answers the authorization
#                   (-32042, protocol 2025-11-25) with their consent link; the script passes it
#                   as a browser would (development sign-in link, POST /api/oauth/consent, the
#                   authorization server's redirects to the gateway's callback, one cookie jar)
#   6. playground   the member's next whoami reaches the protected server as the demo user, and
#                   the demo upstream's echo answers through the aggregate endpoint
#   7. client       the official TypeScript SDK client (test/npm, `make npm-deps`) connects and
#                   lists tools: the stand-in for Claude Code, whose `claude mcp add` line the
#                   banner prints
#
# Each step prints its elapsed seconds; the first step that fails stops the script with a
# non-zero exit, the HTTP status and the body. make run (and the local Postgres it started in
# the clone's .state/pg) is stopped on exit; the temp clone is deleted unless --keep.
#
# Usage: scripts/first-hour.sh [--here] [--repo URL] [--keep]
# Environment: DATABASE_URL (use that database instead of the clone's local cluster),
# FIRST_HOUR_TIMEOUT_SCALE (multiplies every deadline; default 1), NO_COLOR.
# Needs git, make, go, curl, jq, node + npm (the same as make run and make npm-deps).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
repo="$here"
use_here=0
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --here) use_here=1 ;;
    --repo) repo="$2"; shift ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "first-hour: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
scale="${FIRST_HOUR_TIMEOUT_SCALE:-1}"
proto="2025-11-25"

# --- output and timing ------------------------------------------------------------------

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
secs() { printf '%d.%01d' $(($1 / 1000)) $((($1 % 1000) / 100)); }
t_start=$(now_ms)
step_name=""
step_t0=0
begin() { step_name="$1"; step_t0=$(now_ms); printf '\n[%s] %s\n' "$step_name" "$2"; }
info() { printf '    %s\n' "$*"; }
done_step() {
  local t; t=$(now_ms)
  printf '[%s] ok in %s s (%s s since start)\n' "$step_name" "$(secs $((t - step_t0)))" "$(secs $((t - t_start)))"
  summary+=("$(printf '%-11s %7s s %8s s' "$step_name" "$(secs $((t - step_t0)))" "$(secs $((t - t_start)))")")
}
summary=()
# fail MSG [FILE]: the step failed; prints MSG, the last HTTP status and body (or FILE), exits 1.
fail() {
  local t; t=$(now_ms)
  printf '\n[%s] FAILED after %s s: %s\n' "$step_name" "$(secs $((t - step_t0)))" "$1" >&2
  if [ -n "${2:-}" ]; then
    tail -n 60 "$2" >&2
  elif [ -n "${status:-}" ]; then
    printf '    HTTP %s\n' "$status" >&2
    sed 's/^/    /' "$work/body" | head -c 4000 >&2; echo >&2
  fi
  exit 1
}

# --- HTTP helpers (curl + jq) -----------------------------------------------------------

# http METHOD URL TOKEN [JSON]: sets status; the body is in $work/body (body prints it).
http() {
  local args=(-sS -o "$work/body" -w '%{http_code}' -X "$1" "$2" -b "$work/jar" -c "$work/jar")
  [ -n "$3" ] && args+=(-H "Authorization: Bearer $3")
  [ -n "${4:-}" ] && args+=(-H 'Content-Type: application/json' --data "$4")
  status=$(curl "${args[@]}") || { status="none (curl failed)"; fail "$1 $2: no answer"; }
}
body() { cat "$work/body"; }
expect() { [ "$status" = "$1" ] || fail "$2: want HTTP $1"; }

# mcp TOKEN METHOD PARAMS_JSON: one JSON-RPC request on the aggregate endpoint at protocol
# $proto (stateless, no initialize: the gateway answers each POST on its own); the answer's
# JSON-RPC message is left in $work/body (an SSE answer is reduced to its data line).
mcp() {
  local req
  req=$(jq -cn --arg m "$2" --argjson p "$3" '{jsonrpc:"2.0",id:1,method:$m,params:$p}')
  status=$(curl -sS -o "$work/raw" -w '%{http_code}' -X POST "$mcp_url" \
    -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H "Mcp-Protocol-Version: $proto" \
    --data "$req") || { status="none (curl failed)"; fail "POST $mcp_url: no answer"; }
  if grep -q '^data: ' "$work/raw"; then sed -n 's/^data: //p' "$work/raw" | tail -n 1 >"$work/body"; else cp "$work/raw" "$work/body"; fi
  jq -e . "$work/body" >/dev/null 2>&1 || fail "$2: the answer is not JSON"
}

# free_port: a port nothing listens on (127.0.0.1), from a random high range.
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && [[ " ${taken[*]} " != *" $p "* ]]; then
      taken+=("$p"); echo "$p"; return
    fi
  done
  echo "first-hour: no free port found" >&2; exit 1
}
taken=()

# --- cleanup ----------------------------------------------------------------------------

work=$(mktemp -d /tmp/agentpack-first-hour.XXXXXX)
touch "$work/jar"
clone=""
run_pid=""
cleanup() {
  local rc=$?
  if [ -n "$run_pid" ] && kill -0 "$run_pid" 2>/dev/null; then
    echo; echo "first-hour: stopping make run (SIGINT, as Ctrl-C)"
    kill -INT -- "-$run_pid" 2>/dev/null || true
    for _ in $(seq 1 $((30 * scale))); do kill -0 "$run_pid" 2>/dev/null || break; sleep 1; done
    if kill -0 "$run_pid" 2>/dev/null; then
      echo "first-hour: make run still running after SIGINT; SIGKILL" >&2
      kill -KILL -- "-$run_pid" 2>/dev/null || true
    fi
    grep -E '^make run: (stop|stopped)' "$work/run.log" | sed 's/^/    /' || true
  fi
  if [ "$use_here" = 0 ] && [ -n "$clone" ] && [ -d "$clone" ]; then
    if [ -z "${DATABASE_URL:-}" ]; then
      (cd "$clone" && scripts/pg.sh "$([ "$keep" = 1 ] && echo stop || echo destroy)" >/dev/null 2>&1) || true
    fi
    if [ "$keep" = 1 ]; then echo "first-hour: kept the clone in $clone (log: $work/run.log)"; else rm -rf "$clone"; fi
  fi
  [ "$keep" = 1 ] || [ "$rc" != 0 ] || rm -rf "$work"
  [ "$rc" = 0 ] || echo "first-hour: make run's log: $work/run.log" >&2
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the steps --------------------------------------------------------------------------

step_make_run() {
  begin "make run" "fresh clone, then make run until it listens"
  if [ "$use_here" = 1 ]; then
    clone="$here"; info "using this checkout ($here)"
  else
    clone="$work/clone"
    git clone -q "$repo" "$clone" || fail "git clone $repo"
    info "cloned $repo ($(git -C "$clone" rev-parse --short HEAD)) into $clone"
  fi
  port=$(free_port); demo_port=$(free_port); oauth_port=$(free_port); idp_port=$(free_port)
  local env=(PORT="$port" DEMO_UPSTREAM_PORT="$demo_port" OAUTH_DEMO_PORT="$oauth_port" IDP_DEMO_PORT="$idp_port")
  if [ -z "${DATABASE_URL:-}" ]; then
    if [ "$use_here" = 1 ]; then
      info "database: this checkout's local Postgres (.state/pg)"
    else
      env+=(PGPORT="$(free_port)")
      info "database: the clone's local Postgres (.state/pg, PGPORT=${env[-1]#PGPORT=})"
    fi
  else
    info "database: DATABASE_URL"
  fi
  info "ports: PORT=$port DEMO_UPSTREAM_PORT=$demo_port OAUTH_DEMO_PORT=$oauth_port IDP_DEMO_PORT=$idp_port"
  # Its own session (process group), so that cleanup stops make, run.sh and the server together;
  # a background job is no group leader, so setsid execs in place and $! is the group id.
  (cd "$clone" && exec env "${env[@]}" setsid make run) >"$work/run.log" 2>&1 &
  run_pid=$!
  local deadline=$((SECONDS + 900 * scale)) seen=0 lines
  # Echo make run's own progress lines as they come (a cold build is minutes of silence otherwise).
  while :; do
    mapfile -t lines < <(grep '^make run: ' "$work/run.log" || true)
    [ "${#lines[@]}" -gt "$seen" ] && printf '    | %s\n' "${lines[@]:$seen}"
    seen=${#lines[@]}
    [[ " ${lines[*]} " == *"make run: listening on "* ]] && break
    kill -0 "$run_pid" 2>/dev/null || fail "make run exited before listening" "$work/run.log"
    [ $SECONDS -lt $deadline ] || fail "no listening line within $((900 * scale)) s" "$work/run.log"
    sleep 0.5
  done
  base="http://127.0.0.1:$port"
  done_step
}

step_console() {
  begin "console" "GET /admin/ answers the console"
  http GET "$base/admin/" ""
  expect 200 "GET /admin/"
  grep -qi '<script' "$work/body" || fail "GET /admin/ answered 200 without the app's script"
  info "200, $(wc -c <"$work/body") bytes (the console app)"
  done_step
}

step_tokens() {
  begin "tokens" "make token (the built binary's token command)"
  local out
  out=$(cd "$clone" && .state/bin/agentpack-local token) || fail "agentpack-local token: $out"
  workspace=$(sed -n 's/^workspace: *//p' <<<"$out")
  member=$(sed -n 's/^member token: *//p' <<<"$out")
  admin=$(sed -n 's/^admin token: *//p' <<<"$out")
  if [ -z "$workspace" ] || [ -z "$member" ] || [ -z "$admin" ]; then fail "token printed no workspace, member or admin token"; fi
  mcp_url="$base/mcp/$workspace"
  info "workspace $workspace; member and admin tokens (${#member} and ${#admin} characters)"
  done_step
}

step_install() {
  begin "install" "the admin installs \"Demo OAuth upstream\" over REST"
  http GET "$base/api/mcp-marketplace?search=Demo%20OAuth&workspaceId=$workspace" "$admin"
  expect 200 "GET /api/mcp-marketplace"
  entry=$(jq -r '.entries[] | select(.name == "Demo OAuth upstream") | .id' "$work/body")
  [ -n "$entry" ] || fail "no \"Demo OAuth upstream\" entry in the catalog"
  http POST "$base/api/mcp-marketplace/$entry/install" "$admin" "{\"workspaceId\":\"$workspace\"}"
  expect 201 "POST /api/mcp-marketplace/$entry/install"
  conn=$(jq -r .id "$work/body"); handle=$(jq -r .handle "$work/body")
  [ "$(jq -r .authMode "$work/body")" = oauth_per_user ] || fail "the installed connection is not oauth_per_user"
  info "connection $conn (handle $handle, oauth_per_user)"
  local link
  link=$(jq -r '.authorization.authorizationUrl // empty' "$work/body")
  if [ -n "$link" ]; then
    info "the install answers the admin's consent link; passing it as the console does"
    consent "$link" admin
  fi
  done_step
}

# signin ROLE: the banner's development sign-in link for ROLE, followed as the browser does
# (303 to /admin/#token=…); prints the token the console keeps.
signin() {
  local link loc
  link=$(grep -oE "https?://[^ ]*/admin/dev/sign-in\?code=[0-9a-f]+&as=$1" "$work/run.log" | head -n 1)
  [ -n "$link" ] || fail "the banner has no sign-in link for $1" "$work/run.log"
  loc=$(curl -sS -o /dev/null -w '%{redirect_url}' "$link") || fail "GET $link: no answer"
  [[ "$loc" == *"/admin/#token="* ]] || { status=""; fail "sign-in link for $1 redirected to '$loc', not the console"; }
  local t=${loc#*#token=}   # url.QueryEscape'd; decode %XX
  t=${t//+/ }
  printf '%b' "${t//%/\\x}"
}

# consent LINK ROLE: pass a consent link (…/admin/#/consent/{id}) as ROLE's browser would:
# sign in, POST /api/oauth/consent (which sets the flow's binding cookie), then follow the
# authorization server's redirects (mockoidc approves its demo user at once) to the gateway's
# callback, which must show the connection authorized.
consent() {
  local link="$1" who="$2" tok id as_url
  [[ "$link" == *"/admin/#/consent/"* ]] || { status=""; fail "not a consent link: $link"; }
  id=${link#*/admin/#/consent/}
  tok=$(signin "$who")
  http POST "$base/api/oauth/consent" "$tok" "{\"link\":\"$id\"}"
  expect 200 "POST /api/oauth/consent as $who"
  as_url=$(jq -r .authorizationUrl "$work/body")
  info "consent page → authorization server $(cut -d'?' -f1 <<<"$as_url")"
  status=$(curl -sS -L --max-redirs 10 -o "$work/body" -w '%{http_code}' -b "$work/jar" -c "$work/jar" "$as_url") \
    || { status="none (curl failed)"; fail "GET $as_url: no answer"; }
  expect 200 "the authorization server's redirects to the callback"
  grep -q 'data-status="authorized"' "$work/body" || fail "the callback page does not say authorized"
  info "callback: authorized (as $who)"
}

step_connect() {
  begin "connect" "the member's first call answers their consent link; consent as a browser"
  whoami="mcp_${handle}_whoami"
  mcp "$member" tools/call "{\"name\":\"$whoami\",\"arguments\":{}}"
  [ "$(jq -r '.error.code // empty' "$work/body")" = -32042 ] || fail "tools/call $whoami before consent: want error -32042"
  local link
  link=$(jq -r '.error.data.elicitations[0].url // empty' "$work/body")
  [ -n "$link" ] || fail "the -32042 answer has no consent link"
  info "-32042 with the member's link $link"
  consent "$link" member
  done_step
}

step_playground() {
  begin "playground" "the member's whoami reaches the protected server; echo through the aggregate"
  mcp "$member" tools/call "{\"name\":\"$whoami\",\"arguments\":{}}"
  jq -e '.result and (.result.isError | not)' "$work/body" >/dev/null || fail "tools/call $whoami after consent"
  local text
  text=$(jq -r '[.result.content[]? | select(.type == "text") | .text] | join(" ")' "$work/body")
  grep -q 'signed in upstream as' <<<"$text" || fail "whoami does not name the demo user: $text"
  info "$whoami → $text"
  mcp "$member" tools/list '{}'
  local echo
  # The demo upstream's echo (the seeded "Demo upstream" connection), not the OAuth one's.
  echo=$(jq -r --arg oauth "mcp_${handle}_echo" \
    '[.result.tools[]?.name | select(startswith("mcp_") and endswith("_echo") and . != $oauth)] | first // empty' "$work/body")
  [ -n "$echo" ] || fail "the member's tools/list shows no demo upstream echo tool"
  mcp "$member" tools/call "{\"name\":\"$echo\",\"arguments\":{\"message\":\"first hour\"}}"
  jq -e '.result and (.result.isError | not)' "$work/body" >/dev/null || fail "tools/call $echo"
  info "$echo → $(jq -r '.result.content[0].text' "$work/body")"
  done_step
}

step_client() {
  begin "client" "the official TypeScript SDK client connects (standing in for Claude Code)"
  info "Claude Code is not run here: @modelcontextprotocol/sdk's Client + StreamableHTTPClientTransport"
  info "(test/npm/ts-client.mjs) is the same kind of Streamable HTTP client and stands in for it."
  local t0; t0=$(now_ms)
  (cd "$clone" && make npm-deps) >"$work/npm.log" 2>&1 || fail "make npm-deps" "$work/npm.log"
  info "make npm-deps (npm ci of the pinned SDK) took $(secs $(($(now_ms) - t0))) s"
  local out
  out=$(cd "$clone/test/npm" && MCP_AUTHORIZATION="Bearer $admin" node ts-client.mjs "$mcp_url" '[{"op":"listTools"}]' 2>&1) \
    || { printf '%s\n' "$out" >"$work/client.log"; fail "the TypeScript SDK client did not connect" "$work/client.log"; }
  printf '%s\n' "$out" >"$work/client.log"
  local n
  n=$(jq -r '.steps[0].result.tools | length' <<<"$out" 2>/dev/null || echo 0)
  [ "$n" -gt 0 ] 2>/dev/null || fail "the client listed no tools" "$work/client.log"
  info "connected to $(jq -r '.serverInfo.name' <<<"$out") (protocol $(jq -r .protocolVersion <<<"$out")), $n tools listed"
  info "with Claude Code (Node >= 22), run the banner's line:"
  grep -m1 -oE 'claude mcp add .*' "$work/run.log" | sed 's/^/      /' || fail "the banner has no claude mcp add line" "$work/run.log"
  done_step
}

printf 'first-hour: %s, load average %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
step_make_run
step_console
step_tokens
step_install
step_connect
step_playground
step_client
printf '\nfirst-hour: every step worked\n  %-11s %9s %10s\n' step took "since start"
printf '  %s\n' "${summary[@]}"
