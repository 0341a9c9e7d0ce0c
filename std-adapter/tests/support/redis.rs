//! A throwaway `redis-server` on a free loopback port, for tests. Never skips: without
//! `redis-server` on PATH (or in `MRTR_REDIS_SERVER`) the test fails with instructions.
//! Servers can take extra options (an eviction policy, `--replicaof` for a replica).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A running `redis-server` child, killed on drop.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    /// Options beyond the defaults, kept for [`RedisServer::restart`].
    extra: Vec<String>,
    /// The server's working directory (a replica writes the primary's snapshot there),
    /// removed on drop.
    dir: PathBuf,
}

fn binary() -> String {
    std::env::var("MRTR_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("cannot bind a loopback port")
}

impl RedisServer {
    /// Starts a server on a free port.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts a server on a free port with extra options, e.g.
    /// `["--maxmemory-policy", "allkeys-lru"]`.
    pub fn start_with(extra: &[&str]) -> Self {
        let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
        for _ in 0..5 {
            let port = free_port();
            if let Some(server) = Self::try_start_on(port, &extra) {
                return server;
            }
        }
        panic!("redis-server did not start on any of 5 free loopback ports");
    }

    /// Starts a server that also serves TLS on a second free port, with `tls` its `--tls-*`
    /// options (certificate, key, CA, client authentication); returns it and the TLS port.
    /// Readiness and [`RedisServer::command`] use the plain port.
    pub fn start_tls(tls: &[&str]) -> (Self, u16) {
        for _ in 0..5 {
            let (port, tls_port) = (free_port(), free_port());
            if port == tls_port {
                continue;
            }
            let mut extra = vec!["--tls-port".to_owned(), tls_port.to_string()];
            extra.extend(tls.iter().map(|s| (*s).to_owned()));
            if let Some(server) = Self::try_start_on(port, &extra) {
                return (server, tls_port);
            }
        }
        panic!("redis-server did not start with TLS on any of 5 pairs of free loopback ports");
    }

    /// Starts a replica of `primary` and waits until the primary lists it as online.
    pub fn start_replica_of(primary: &RedisServer) -> Self {
        // Redis 7 waits 5 s for more replicas before a diskless full sync: not here.
        primary.config_set("repl-diskless-sync-delay", "0");
        let replica = Self::start_with(&["--replicaof", "127.0.0.1", &primary.port.to_string()]);
        primary.wait_for_online_replicas(1);
        replica
    }

    /// Waits (up to 30 s) until `n` replicas are connected and online.
    pub fn wait_for_online_replicas(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let info = self.info("replication");
            let online = info
                .lines()
                .filter(|l| l.starts_with("slave") && l.contains("state=online"))
                .count();
            if online >= n {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "replicas never came online:\n{info}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn try_start_on(port: u16, extra: &[String]) -> Option<Self> {
        // One directory per start: a restart drops (and cleans up) the previous server.
        static STARTS: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mrtr-redis-{}-{port}-{}",
            std::process::id(),
            STARTS.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("cannot create a directory for redis-server");
        let child = Command::new(binary())
            .arg("--dir")
            .arg(&dir)
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--loglevel",
                "warning",
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run `{}` ({e}): the Redis replay-cache tests need a real redis-server. \
                     Install it with `bash ci/suites/05-deps.sh` (Debian package redis-server), \
                     or point MRTR_REDIS_SERVER at the binary.",
                    binary()
                )
            });
        let mut server = Self {
            child: Some(child),
            port,
            extra: extra.to_vec(),
            dir,
        };
        if server.wait_ready(Duration::from_secs(10)) {
            Some(server)
        } else {
            server.stop();
            None
        }
    }

    fn wait_ready(&mut self, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(child) = &mut self.child
                && let Ok(Some(_)) = child.try_wait()
            {
                return false; // exited: port taken or bad option
            }
            // A server with `requirepass` answers NOAUTH: it is up all the same.
            if self
                .command(&["PING"])
                .is_some_and(|r| r == "+PONG" || r.starts_with("-NOAUTH"))
            {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The `redis://` URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Sends one command over a fresh connection and returns the first reply line.
    pub fn command(&self, args: &[&str]) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        let mut req = format!("*{}\r\n", args.len());
        for a in args {
            req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        s.write_all(req.as_bytes()).ok()?;
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).ok()?;
        Some(line.trim_end().to_owned())
    }

    /// `INFO <section>` as text (panics if the server does not answer).
    pub fn info(&self, section: &str) -> String {
        self.bulk(&["INFO", section])
            .unwrap_or_else(|| panic!("INFO {section} got no answer"))
    }

    /// A `field:value` of `INFO <section>`.
    pub fn info_field(&self, section: &str, field: &str) -> String {
        let info = self.info(section);
        info.lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
            .trim()
            .to_owned()
    }

    /// Sends one command whose reply is a bulk string and returns it.
    pub fn bulk(&self, args: &[&str]) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        let mut req = format!("*{}\r\n", args.len());
        for a in args {
            req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        s.write_all(req.as_bytes()).ok()?;
        let mut reader = BufReader::new(s);
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let len: usize = header.trim_end().strip_prefix('$')?.parse().ok()?;
        let mut body = vec![0; len];
        reader.read_exact(&mut body).ok()?;
        String::from_utf8(body).ok()
    }

    /// `CONFIG SET name value`, asserting it was taken.
    pub fn config_set(&self, name: &str, value: &str) {
        assert_eq!(
            self.command(&["CONFIG", "SET", name, value]).as_deref(),
            Some("+OK"),
            "CONFIG SET {name} {value}"
        );
    }

    /// Kills the server (SIGKILL: like a crash) and waits for it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts a new, empty server on the same port, with the same options, after
    /// [`RedisServer::stop`].
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "stop it first");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(new) = Self::try_start_on(self.port, &self.extra) {
                *self = new;
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("redis-server did not restart on port {}", self.port);
    }

    /// Freezes (SIGSTOP) or thaws (SIGCONT) the server: a hung Redis.
    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.pid().to_string()])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "kill {sig} failed");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop(); // SIGKILL ends a frozen (SIGSTOP) server too
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
