//! The conformance tools and prompt are test scaffolding: a server built without the `testing`
//! feature lists none of them, and one built with it lists them (so this test fails if the
//! gate moves either way). 10-workspace runs the default build, 60-peers the testing build.

mod support;

use serde_json::json;
use support::{Server, VERSION};

/// The names a stateless `method` (`tools/list` or `prompts/list`) answers with.
fn listed(server: &Server, method: &str, member: &str) -> Vec<String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "scaffolding", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }}});
    let response = server.http(
        "POST",
        &[
            ("Authorization", "Bearer alice-token"),
            ("MCP-Protocol-Version", VERSION),
            ("Mcp-Method", method),
        ],
        Some(&body),
    );
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    let answer = response.json();
    let items = answer["result"][member]
        .as_array()
        .unwrap_or_else(|| panic!("no {member} in {answer}"));
    items
        .iter()
        .map(|item| item["name"].as_str().map(str::to_owned))
        .collect::<Option<Vec<String>>>()
        .unwrap_or_else(|| panic!("a nameless entry in {answer}"))
}

fn conformance(names: &[String]) -> Vec<&str> {
    names
        .iter()
        .map(String::as_str)
        .filter(|n| n.starts_with("test_"))
        .collect()
}

#[test]
fn conformance_tools_and_prompt_exist_only_in_the_testing_build() {
    let server = Server::start("scaffolding", &[]);
    let tools = listed(&server, "tools/list", "tools");
    let prompts = listed(&server, "prompts/list", "prompts");
    // The application's own tools and prompt are there either way.
    assert!(tools.iter().any(|t| t == "book_table"), "{tools:?}");
    assert!(prompts.iter().any(|p| p == "plan_dinner"), "{prompts:?}");
    if cfg!(feature = "testing") {
        assert!(
            conformance(&prompts).contains(&"test_input_required_result_prompt"),
            "{prompts:?}"
        );
        assert!(!conformance(&tools).is_empty(), "{tools:?}");
    } else {
        assert_eq!(conformance(&tools), Vec::<&str>::new());
        assert_eq!(conformance(&prompts), Vec::<&str>::new());
    }
}
