#!/usr/bin/env bash
# A three-master Redis Cluster on loopback, for the cluster test and bench (docs/scaling.md).
#   scripts/redis-cluster.sh start [first-port [dir]]   starts it (ports first-port..first-port+2,
#                                                       default 7001; cluster bus ports 10000 above)
#   scripts/redis-cluster.sh stop [first-port [dir]]    stops it and removes its files
# Its files (configs, logs, pid files) live in dir, default $TMPDIR/fleet-redis-cluster-<first-port>.
# It stops only the nodes whose pid files are in dir, and refuses to start when a port answers
# for a server that is not its own, so two clusters on one machine never touch each other.
# Exit status 3: a port was taken (pick others and retry).
set -euo pipefail
action=${1:?start or stop}
first=${2:-7001}
dir=${3:-${TMPDIR:-/tmp}/fleet-redis-cluster-$first}
ports=("$first" "$((first + 1))" "$((first + 2))")

stop_nodes() {
  for port in "${ports[@]}"; do
    pidfile="$dir/redis-$port.pid"
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
}

case "$action" in
  start)
    rm -rf "$dir" && mkdir -p "$dir"
    dir=$(cd "$dir" && pwd -P)
    for port in "${ports[@]}"; do
      redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
        --cluster-config-file "$dir/nodes-$port.conf" --cluster-node-timeout 5000 \
        --save "" --appendonly no --dir "$dir" --logfile "$dir/redis-$port.log" \
        --pidfile "$dir/redis-$port.pid" --daemonize yes
    done
    for port in "${ports[@]}"; do
      for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
      # A node that failed to bind leaves the port to whoever holds it: check the answer is ours.
      if [ "$(redis-cli -p "$port" config get dir 2>/dev/null | sed -n 2p)" != "$dir" ]; then
        echo "port $port (or its bus port $((port + 10000))) is taken" >&2
        stop_nodes
        exit 3
      fi
    done
    redis-cli --cluster create $(printf '127.0.0.1:%s ' "${ports[@]}") --cluster-replicas 0 --cluster-yes >/dev/null
    for _ in $(seq 1 100); do
      ok=0
      for port in "${ports[@]}"; do
        redis-cli -p "$port" cluster info | grep -q 'cluster_state:ok' && ok=$((ok + 1))
      done
      [ "$ok" = 3 ] && { echo "redis cluster up on ${ports[*]}"; exit 0; }
      sleep 0.1
    done
    echo "redis cluster did not reach cluster_state:ok" >&2
    stop_nodes
    exit 1
    ;;
  stop)
    stop_nodes
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop [first-port [dir]]" >&2
    exit 2
    ;;
esac
