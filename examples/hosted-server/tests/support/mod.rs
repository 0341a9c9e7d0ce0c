//! Starts the hosted server and speaks plain HTTP/1.1 to it (std only: one connection per
//! request, `Connection: close`).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The protocol revision of stateless requests.
pub const VERSION: &str = "2026-07-28";

/// A running hosted server, killed when dropped.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Server {
    /// Starts the server with `args` (on a free loopback port, no operations listener).
    pub fn start(name: &str, args: &[&str]) -> Self {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mrtr-hosted-{name}-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let addr_file = dir.join("addr");
        let log = std::fs::File::create(dir.join("log")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_mrtr-hosted-server"))
            .args([
                "--listen",
                "127.0.0.1:0",
                "--ops-listen",
                "off",
                "--addr-file",
            ])
            .arg(&addr_file)
            .args(args)
            .env_remove("MRTR_KEYS")
            .env_remove("MRTR_KEYS_FILE")
            .env_remove("MRTR_REDIS_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("the hosted server starts");
        let mut server = Self {
            child,
            addr: "127.0.0.1:0".parse().unwrap(),
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(text) = std::fs::read_to_string(&addr_file)
                && let Ok(addr) = text.trim().parse()
            {
                server.addr = addr;
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                let log = std::fs::read_to_string(server.dir.join("log")).unwrap_or_default();
                panic!("the hosted server exited ({status}): {log}");
            }
            assert!(Instant::now() < deadline, "the hosted server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }

    /// Sends one HTTP request; returns the status, the headers (names lower-case) and the body.
    pub fn http(&self, method: &str, headers: &[(&str, &str)], body: Option<&Value>) -> Response {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
             Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        let mut stream = TcpStream::connect(self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        Response::parse(&raw)
    }

    /// A stateless 2026-07-28 `tools/call` of `name` as `token`'s user, resuming `state` if
    /// given; returns the JSON-RPC response.
    pub fn call_tool(
        &self,
        token: &str,
        name: &str,
        arguments: Value,
        state: Option<&str>,
    ) -> Value {
        let mut params = json!({
            "name": name,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientInfo": {"name": "quota-tests", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        });
        if let Some(state) = state {
            params["requestState"] = json!(state);
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
        let auth = format!("Bearer {token}");
        let response = self.http(
            "POST",
            &[
                ("Authorization", &auth),
                ("MCP-Protocol-Version", VERSION),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", name),
            ],
            Some(&body),
        );
        response.json()
    }
}

/// An HTTP response.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    fn parse(raw: &[u8]) -> Self {
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a complete response head");
        let head = String::from_utf8_lossy(&raw[..end]);
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .expect("a status line");
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let mut body = raw[end + 4..].to_vec();
        let chunked = headers
            .iter()
            .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
        if chunked {
            body = dechunk(&body);
        }
        Self {
            status,
            headers,
            body,
        }
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON: a JSON body, or the last JSON-RPC response of an event stream.
    pub fn json(&self) -> Value {
        let text = String::from_utf8_lossy(&self.body);
        if self
            .header("content-type")
            .is_some_and(|t| t.contains("text/event-stream"))
        {
            return text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .rfind(|m| m.get("result").is_some() || m.get("error").is_some())
                .unwrap_or(Value::Null);
        }
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("status {}: not JSON ({e}): {text}", self.status))
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&body[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 || body.len() < eol + 2 + size {
            return out;
        }
        out.extend_from_slice(&body[eol + 2..eol + 2 + size]);
        body = &body[(eol + 4 + size).min(body.len())..];
    }
}
