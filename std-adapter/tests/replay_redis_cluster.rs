//! The Redis replay cache on a real Redis Cluster of three primaries, started by the test
//! (`redis-server --cluster-enabled yes`, joined with `redis-cli --cluster create`):
//! * two caches ("two mrtr nodes") share the cluster: an id spent on one is refused on the other;
//! * the eviction policy is read on every primary: one evicting primary refuses the whole store,
//!   and the log names that node;
//! * a resharding (`redis-cli --cluster reshard`, keys moved with `MIGRATE`) during traffic
//!   re-admits no recorded id.
#![cfg(feature = "redis-cluster")]

mod fleet;
mod support;

use std::time::{Duration, Instant};

use fleet::{Cluster, addr, id};
use mrtr_replay::redis::{RedisReplayCache, RedisReplayCacheBuilder};
use mrtr_replay::{AsyncReplayCache, EvictionPolicy, NotReadyCause, Readiness};
use mrtr_std::core::replay::ReplayError;
use support::capture_logs;

const NOW: u64 = 1_000_000;
const HOUR: u64 = 3_600_000;

fn builder(cluster: &Cluster, prefix: &str) -> RedisReplayCacheBuilder {
    // Generous timeouts: two cores shared with builds; a healthy cluster answers in well
    // under a millisecond.
    RedisReplayCache::cluster_builder(cluster.urls())
        .prefix(prefix)
        .connect_timeout(Duration::from_secs(3))
        .command_timeout(Duration::from_secs(3))
        .reconnect_backoff(Duration::from_millis(100))
}

async fn record(c: &RedisReplayCache, n: u64) -> Result<(), ReplayError> {
    c.check_and_record(&id(n), NOW + HOUR, NOW).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_share_the_cluster_and_an_id_spent_on_one_is_refused_on_the_other() {
    let cluster = Cluster::start(3);
    let a = builder(&cluster, "shared:").build().unwrap();
    let b = builder(&cluster, "shared:").build().unwrap();
    assert_eq!(a.probe().await, Readiness::Ready);
    assert_eq!(b.probe().await, Readiness::Ready);
    for n in 0..300 {
        let (first, second) = if n % 2 == 0 { (&a, &b) } else { (&b, &a) };
        assert_eq!(record(first, n).await, Ok(()), "id {n}");
        assert_eq!(
            record(second, n).await,
            Err(ReplayError::Replayed),
            "id {n}"
        );
        assert_eq!(record(first, n).await, Err(ReplayError::Replayed), "id {n}");
    }
    // The ids really are spread over the three primaries (the key's slot decides).
    for i in 0..3 {
        assert!(cluster.keys_on(i) > 0, "node {i} holds no id");
    }
    let total: u64 = (0..3).map(|i| cluster.keys_on(i)).sum();
    assert_eq!(total, 300);
    // A different prefix is a different server family: the same id is new there.
    let other = builder(&cluster, "other:").build().unwrap();
    assert_eq!(record(&other, 7).await, Ok(()));
}

#[test]
fn an_evicting_policy_on_any_primary_refuses_the_store_and_names_that_node() {
    let cluster = Cluster::start(3);
    cluster.nodes[1].config_set("maxmemory-policy", "allkeys-lru");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let c = builder(&cluster, "policy:").build().unwrap();
    let ((probed, recorded), logs) =
        capture_logs(|| runtime.block_on(async { (c.probe().await, record(&c, 1).await) }));
    assert_eq!(
        probed,
        Readiness::NotReady(NotReadyCause::EvictingPolicy(EvictionPolicy::AllkeysLru))
    );
    assert_eq!(recorded, Err(ReplayError::Unavailable));
    let evicting = addr(cluster.nodes[1].port());
    assert!(
        logs.contains(&evicting),
        "the log names {evicting}:\n{logs}"
    );
    assert!(logs.contains("allkeys-lru"), "{logs}");
    for other in [0, 2] {
        let fine = addr(cluster.nodes[other].port());
        assert!(!logs.contains(&fine), "blames {fine}:\n{logs}");
    }
    // Nothing was written anywhere.
    let total: u64 = (0..3).map(|i| cluster.keys_on(i)).sum();
    assert_eq!(total, 0);

    // Fixed: the cache re-reads after its reconnect back-off and heals by itself.
    cluster.nodes[1].config_set("maxmemory-policy", "noeviction");
    runtime.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(30);
        while record(&c, 2).await != Ok(()) {
            assert!(Instant::now() < deadline, "never healed");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(c.readiness(), Readiness::Ready);

        // A primary that turns evicting later is caught by the re-check on a live connection.
        let live = builder(&cluster, "policy:")
            .policy_recheck_interval(Duration::ZERO)
            .build()
            .unwrap();
        assert_eq!(record(&live, 3).await, Ok(()));
        cluster.nodes[2].config_set("maxmemory-policy", "volatile-lru");
        assert_eq!(record(&live, 4).await, Err(ReplayError::Unavailable));
        assert_eq!(
            live.readiness(),
            Readiness::NotReady(NotReadyCause::EvictingPolicy(EvictionPolicy::VolatileLru))
        );
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resharding_during_traffic_readmits_nothing() {
    let cluster = Cluster::start(3);
    let a = builder(&cluster, "reshard:").build().unwrap();
    let b = builder(&cluster, "reshard:").build().unwrap();
    let nodes = [&a, &b];

    // Live ids in every slot range before the move.
    const BEFORE: u64 = 3000;
    let mut recorded: Vec<u64> = Vec::new();
    for n in 0..BEFORE {
        assert_eq!(record(nodes[(n % 2) as usize], n).await, Ok(()), "id {n}");
        recorded.push(n);
    }
    let slots_before = [0, 1, 2].map(|i| cluster.slots_of(i));
    let keys_before = cluster.keys_on(0);

    // Move 3000 slots from node 0 to node 1, then 2000 from node 2 to node 0, with their keys,
    // ten keys per MIGRATE, while both caches record and re-check ids.
    let ids: Vec<String> = (0..3).map(|i| cluster.node_id(i)).collect();
    let mover = {
        let ports: Vec<u16> = cluster.nodes.iter().map(|n| n.port()).collect();
        std::thread::spawn(move || {
            let seed = addr(ports[0]);
            for (from, to, slots) in [(0, 1, "3000"), (2, 0, "2000")] {
                fleet::redis_cli(&[
                    "--cluster",
                    "reshard",
                    &seed,
                    "--cluster-from",
                    &ids[from],
                    "--cluster-to",
                    &ids[to],
                    "--cluster-slots",
                    slots,
                    "--cluster-pipeline",
                    "10",
                    "--cluster-yes",
                ]);
            }
        })
    };

    let started = Instant::now();
    let (mut checks, mut new_ok, mut unavailable) = (0u64, 0u64, 0u64);
    let mut n = BEFORE;
    while !mover.is_finished() {
        let (first, second) = (nodes[(n % 2) as usize], nodes[((n + 1) % 2) as usize]);
        match record(first, n).await {
            Ok(()) => {
                new_ok += 1;
                recorded.push(n);
                // Spent on one node: refused on the other, whatever slot it moves through.
                let again = record(second, n).await;
                assert_ne!(again, Ok(()), "id {n} admitted twice during the resharding");
                checks += 1;
            }
            // Not confirmed: possibly recorded; never counted as spent nor as free.
            Err(ReplayError::Unavailable) => unavailable += 1,
            Err(e) => panic!("a new id {n} was refused: {e:?}"),
        }
        // An earlier id, spread over the whole range (and so over the moving slots).
        let old = recorded[(n as usize * 7919) % recorded.len()];
        let again = record(second, old).await;
        assert_ne!(
            again,
            Ok(()),
            "id {old} admitted again during the resharding"
        );
        checks += 1;
        n += 1;
    }
    mover.join().expect("redis-cli --cluster reshard failed");
    let moving = started.elapsed();

    // The slots and keys really moved.
    let slots_after = [0, 1, 2].map(|i| cluster.slots_of(i));
    assert_eq!(slots_after[1], slots_before[1] + 3000);
    assert_eq!(slots_after[2], slots_before[2] - 2000);
    assert_eq!(slots_after[0], slots_before[0] - 3000 + 2000);
    assert_ne!(cluster.keys_on(0), keys_before);

    // Afterwards, every recorded id is refused as a replay on both nodes.
    for &old in &recorded {
        for c in nodes {
            checks += 1;
            assert_eq!(
                record(c, old).await,
                Err(ReplayError::Replayed),
                "id {old} after the resharding"
            );
        }
    }
    let total: u64 = (0..3).map(|i| cluster.keys_on(i)).sum();
    assert!(total >= recorded.len() as u64);
    println!(
        "cluster resharding: 5000 slots moved in {:.1} s; ids recorded before {BEFORE}, during \
         {new_ok} (unconfirmed {unavailable}); {checks} replay checks, 0 re-admitted; slots \
         {slots_before:?} -> {slots_after:?}",
        moving.as_secs_f64()
    );
}

#[test]
fn cluster_and_sentinel_configurations_are_checked_and_never_show_passwords() {
    use mrtr_replay::redis::RedisConfigError;
    let none: [&str; 0] = [];
    assert_eq!(
        RedisReplayCache::cluster_builder(none).build().unwrap_err(),
        RedisConfigError::NoNodes
    );
    assert_eq!(
        RedisReplayCache::cluster_builder(["not a url"])
            .build()
            .unwrap_err(),
        RedisConfigError::BadUrl
    );
    // The blocking cache talks to one Redis only.
    assert!(matches!(
        RedisReplayCache::cluster_builder(["redis://127.0.0.1:7000/"]).build_blocking(),
        Err(RedisConfigError::Unsupported(_))
    ));
    let cluster = RedisReplayCache::cluster_builder(["redis://:cl-s3cret@127.0.0.1:7000/"])
        .build()
        .unwrap();
    assert!(!format!("{cluster:?}").contains("cl-s3cret"));
    #[cfg(feature = "redis-sentinel")]
    {
        assert_eq!(
            RedisReplayCache::sentinel_builder(none, "p")
                .build()
                .unwrap_err(),
            RedisConfigError::NoNodes
        );
        let sentinel =
            RedisReplayCache::sentinel_builder(["redis://:se-s3cret@127.0.0.1:26379/"], "p")
                .sentinel_primary_auth(Some("app"), "pr-s3cret")
                .build()
                .unwrap();
        let shown = format!("{sentinel:?}");
        assert!(
            !shown.contains("se-s3cret") && !shown.contains("pr-s3cret"),
            "{shown}"
        );
    }
}
