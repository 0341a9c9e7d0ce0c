//! A throwaway `redis-server` on a free loopback port, for tests. Never skips: without
//! `redis-server` on PATH (or in `MRTR_REDIS_SERVER`) the test fails with instructions.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server` child, killed on drop.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
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
        for _ in 0..5 {
            let port = free_port();
            if let Some(server) = Self::try_start_on(port) {
                return server;
            }
        }
        panic!("redis-server did not start on any of 5 free loopback ports");
    }

    fn try_start_on(port: u16) -> Option<Self> {
        let child = Command::new(binary())
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
            if self.command(&["PING"]).as_deref() == Some("+PONG") {
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

    /// Kills the server (SIGKILL: like a crash) and waits for it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts a new, empty server on the same port after [`RedisServer::stop`].
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "stop it first");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(new) = Self::try_start_on(self.port) {
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
    }
}
