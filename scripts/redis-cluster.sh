#!/usr/bin/env bash
# A three-master Redis Cluster on loopback, for the cluster test and bench (docs/scaling.md).
#   scripts/redis-cluster.sh start [first-port]   starts it (ports first-port..first-port+2, default 7001)
#   scripts/redis-cluster.sh stop [first-port]    stops it and removes its files
set -euo pipefail
action=${1:?start or stop}
first=${2:-7001}
ports=("$first" "$((first + 1))" "$((first + 2))")
dir=${TMPDIR:-/tmp}/fleet-redis-cluster-$first

case "$action" in
  start)
    rm -rf "$dir" && mkdir -p "$dir"
    for port in "${ports[@]}"; do
      redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
        --cluster-config-file "$dir/nodes-$port.conf" --cluster-node-timeout 5000 \
        --save "" --appendonly no --dir "$dir" --logfile "$dir/redis-$port.log" --daemonize yes
    done
    for port in "${ports[@]}"; do
      for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
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
    exit 1
    ;;
  stop)
    for port in "${ports[@]}"; do redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; done
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop [first-port]" >&2
    exit 2
    ;;
esac
