//! Throwaway Redis deployments for the fleet tests: a Redis Cluster of real `redis-server`
//! nodes (created with `redis-cli --cluster create`), and a Sentinel group (a primary, its
//! replicas and `redis-sentinel` processes). Everything runs on free loopback ports in temp
//! dirs and is killed on drop. Never skips: a missing binary fails the test with instructions
//! (`bash ci/suites/40-redis-fleet.sh` installs them).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::redis::RedisServer;

/// How long the helpers wait for a deployment to settle before failing the test.
const SETTLE: Duration = Duration::from_secs(60);

/// Token id `n` (16 bytes, distinct for distinct `n`).
pub fn id(n: u64) -> [u8; 16] {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&n.to_le_bytes());
    id[8..].copy_from_slice(&(!n).to_be_bytes());
    id
}

fn tool(name: &str) -> String {
    let var = format!("MRTR_{}", name.to_uppercase().replace('-', "_"));
    std::env::var(var).unwrap_or_else(|_| name.to_owned())
}

/// Runs `redis-cli ARGS` and returns its standard output; panics (with its output) when it
/// fails.
pub fn redis_cli(args: &[&str]) -> String {
    let out = Command::new(tool("redis-cli"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `redis-cli` ({e}): the fleet tests need Debian's redis-tools; run \
                 `bash ci/suites/40-redis-fleet.sh`, or set MRTR_REDIS_CLI"
            )
        });
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "redis-cli {args:?} failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Polls `ok` every 50 ms until it holds; panics with `what` after [`SETTLE`].
pub fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + SETTLE;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A Redis Cluster of primaries only, one slot range each.
pub struct Cluster {
    pub nodes: Vec<RedisServer>,
}

impl Cluster {
    /// Starts `primaries` cluster-mode servers and joins them with `redis-cli --cluster
    /// create` (slots spread evenly); waits until every node reports `cluster_state:ok`.
    pub fn start(primaries: usize) -> Self {
        let nodes: Vec<RedisServer> = (0..primaries)
            .map(|_| {
                RedisServer::start_with(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-node-timeout",
                    "5000",
                ])
            })
            .collect();
        let addrs: Vec<String> = nodes.iter().map(|n| addr(n.port())).collect();
        let mut args = vec!["--cluster", "create"];
        args.extend(addrs.iter().map(String::as_str));
        args.extend(["--cluster-replicas", "0", "--cluster-yes"]);
        redis_cli(&args);
        let cluster = Self { nodes };
        for n in &cluster.nodes {
            wait_until("cluster_state:ok on every node", || {
                n.bulk(&["CLUSTER", "INFO"])
                    .is_some_and(|i| i.contains("cluster_state:ok"))
            });
        }
        cluster
    }

    /// The seed URLs of every node.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    /// Node `i`'s cluster id (`CLUSTER MYID`).
    pub fn node_id(&self, i: usize) -> String {
        self.nodes[i]
            .bulk(&["CLUSTER", "MYID"])
            .expect("CLUSTER MYID")
    }

    /// How many slots node `i` serves, from its own `CLUSTER NODES` line.
    pub fn slots_of(&self, i: usize) -> usize {
        let nodes = self.nodes[i]
            .bulk(&["CLUSTER", "NODES"])
            .expect("CLUSTER NODES");
        let mine = nodes
            .lines()
            .find(|l| l.contains("myself"))
            .expect("a myself line");
        mine.split_whitespace()
            .skip(8)
            .filter(|r| !r.starts_with('['))
            .map(|r| match r.split_once('-') {
                Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
                None => 1,
            })
            .sum()
    }

    /// Keys held by node `i` (`DBSIZE`).
    pub fn keys_on(&self, i: usize) -> u64 {
        let reply = self.nodes[i].command(&["DBSIZE"]).expect("DBSIZE");
        reply
            .trim_start_matches(':')
            .parse()
            .expect("a DBSIZE count")
    }
}

/// `127.0.0.1:port`.
pub fn addr(port: u16) -> String {
    format!("127.0.0.1:{port}")
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("cannot bind a loopback port")
}

/// The name the sentinels monitor the primary under.
pub const PRIMARY_NAME: &str = "mrtr-primary";

/// One `redis-sentinel` process with its own (rewritable) config file.
pub struct Sentinel {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
}

impl Sentinel {
    /// Starts a sentinel monitoring the primary at `primary_port` (quorum 2; a primary is
    /// down after `down_after_ms` without answers).
    pub fn start(primary_port: u16, down_after_ms: u64) -> Self {
        for attempt in 0..5 {
            let port = free_port();
            let dir = std::env::temp_dir().join(format!(
                "mrtr-sentinel-{}-{port}-{attempt}",
                std::process::id()
            ));
            std::fs::create_dir_all(&dir).expect("cannot create a sentinel directory");
            let conf = dir.join("sentinel.conf");
            let text = format!(
                "port {port}\nbind 127.0.0.1\ndaemonize no\ndir {}\nlogfile \"\"\n\
                 sentinel monitor {PRIMARY_NAME} 127.0.0.1 {primary_port} 2\n\
                 sentinel down-after-milliseconds {PRIMARY_NAME} {down_after_ms}\n\
                 sentinel failover-timeout {PRIMARY_NAME} 10000\n\
                 sentinel parallel-syncs {PRIMARY_NAME} 2\n",
                dir.display()
            );
            std::fs::write(&conf, text).expect("cannot write sentinel.conf");
            let child = Command::new(tool("redis-sentinel"))
                .arg(&conf)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| {
                    panic!(
                        "cannot run `redis-sentinel` ({e}): the Sentinel tests need Debian's \
                         redis-sentinel package; run `bash ci/suites/40-redis-fleet.sh`, or \
                         set MRTR_REDIS_SENTINEL"
                    )
                });
            let mut s = Self {
                child: Some(child),
                port,
                dir,
            };
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Some(c) = &mut s.child
                    && let Ok(Some(_)) = c.try_wait()
                {
                    break; // port taken: try another
                }
                if command(port, &["PING"]).as_deref() == Some("+PONG") {
                    return s;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("redis-sentinel did not start on any of 5 free loopback ports");
    }

    /// The `redis://` URL of this sentinel.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// `INFO sentinel`'s line for the monitored primary (`name=…,status=…,address=…,
    /// slaves=…,sentinels=…`).
    pub fn primary_line(&self) -> String {
        bulk(self.port, &["INFO", "sentinel"])
            .and_then(|i| {
                i.lines()
                    .find(|l| l.starts_with("master0:"))
                    .map(str::to_owned)
            })
            .unwrap_or_default()
    }

    /// The primary's port as this sentinel sees it.
    pub fn primary_port(&self) -> Option<u16> {
        let line = self.primary_line();
        let address = line.split(',').find_map(|f| f.strip_prefix("address="))?;
        address.rsplit_once(':')?.1.parse().ok()
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A primary, its replicas and three sentinels that agree on all of them.
pub struct SentinelGroup {
    pub primary: RedisServer,
    pub replicas: Vec<RedisServer>,
    pub sentinels: Vec<Sentinel>,
}

impl SentinelGroup {
    /// Starts a primary, `replicas` replicas (waits until they are online) and three
    /// sentinels, and waits until every sentinel sees every replica and the other sentinels.
    pub fn start(replicas: usize, down_after_ms: u64) -> Self {
        let primary = RedisServer::start();
        primary.config_set("repl-diskless-sync-delay", "0");
        let port = primary.port().to_string();
        let replicas: Vec<RedisServer> = (0..replicas)
            .map(|_| RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]))
            .collect();
        primary.wait_for_online_replicas(replicas.len());
        let sentinels: Vec<Sentinel> = (0..3)
            .map(|_| Sentinel::start(primary.port(), down_after_ms))
            .collect();
        let want = format!("slaves={},sentinels=3", replicas.len());
        for s in &sentinels {
            wait_until(
                "every sentinel sees the replicas and the other sentinels",
                || {
                    let line = s.primary_line();
                    line.contains("status=ok") && line.contains(&want)
                },
            );
        }
        Self {
            primary,
            replicas,
            sentinels,
        }
    }

    /// The sentinels' URLs.
    pub fn sentinel_urls(&self) -> Vec<String> {
        self.sentinels.iter().map(Sentinel::url).collect()
    }
}

/// One command to `127.0.0.1:port` over a fresh connection; the first reply line.
pub fn command(port: u16, args: &[&str]) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(&request(args)).ok()?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).ok()?;
    Some(line.trim_end().to_owned())
}

/// One command whose reply is a bulk string.
pub fn bulk(port: u16, args: &[&str]) -> Option<String> {
    use std::io::Read;
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(&request(args)).ok()?;
    let mut reader = BufReader::new(s);
    let mut header = String::new();
    reader.read_line(&mut header).ok()?;
    let len: usize = header.trim_end().strip_prefix('$')?.parse().ok()?;
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    String::from_utf8(body).ok()
}

fn request(args: &[&str]) -> Vec<u8> {
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    req.into_bytes()
}
