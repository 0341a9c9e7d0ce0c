//! One endpoint for both eras, with rmcp's own client in each: a flow written once as rounds
//! (`Pending::run`) answered with MRTR rounds in 2026-07-28 and with server-to-client
//! elicitation in a 2025-11-25 / 2025-06-18 session; 2025-era `resources/subscribe` grants
//! (`mrtr_rmcp::session`) delivered while valid, released without a check, and a session
//! retired (HTTP 404 from then on) when its grant is denied.

#![allow(deprecated)] // resources/subscribe and unsubscribe are 2025-era (the point here)

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mrtr_rmcp::input::{self, Answer, Declared};
use mrtr_rmcp::session::{ResourceGrants, SUBSCRIBE_DENIED};
use mrtr_rmcp::{HasMrtr, Mrtr, Parameters};
use mrtr_std::clock::StdMonotonicClock;
use mrtr_subscriptions::{
    Authorization, AuthorizationContext, Grant, InvocationFeatures, Registry, RegistryConfig,
    RegistryHandle, Selector,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ContentBlock, ElicitRequestParams, ElicitResult, ElicitationAction, ErrorData, Implementation,
    ProtocolVersion, ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServerHandler};
use rmcp::{tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::json;
use support::{RawSession, mcp_error, serve_dual};

const REPORT: &str = "mrtr://report";

/// The policy: allowed while `allow` is set (4 s grants); counts checks.
#[derive(Clone)]
struct Policy {
    allow: Arc<AtomicBool>,
    checks: Arc<AtomicUsize>,
}

#[derive(Clone)]
struct Booker {
    tool_router: ToolRouter<Self>,
    mrtr: Mrtr,
    grants: ResourceGrants<StdMonotonicClock>,
    /// Rounds `book_async` ran, counted behind an async lock.
    ledger: Arc<tokio::sync::Mutex<u32>>,
}

impl HasMrtr for Booker {
    fn mrtr(&self) -> &Mrtr {
        &self.mrtr
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct BookArgs {
    /// Guests.
    party: u32,
}

#[derive(Serialize, Deserialize)]
enum Step {
    AwaitDate,
    AwaitConfirm { date: String },
}

/// One round of the booking flow, written once for both eras.
fn book_round(call: &mrtr_rmcp::Call, party: u32) -> Result<CallToolResponse, ErrorData> {
    let form = |key: &str| input::one(key, input::form(key, json!({key: {"type": "string"}}), &[]));
    match call.state::<Step>()? {
        None => Ok(call.pause(&Step::AwaitDate, form("date"))?.into()),
        Some(Step::AwaitDate) => match input::answer(call.input_responses(), "date") {
            Answer::Accepted(f) => {
                let date = input::text_field(f, "date").unwrap_or("?").to_owned();
                Ok(call
                    .pause(&Step::AwaitConfirm { date }, form("confirm"))?
                    .into())
            }
            _ => Ok(call.pause(&Step::AwaitDate, form("date"))?.into()),
        },
        Some(Step::AwaitConfirm { date }) => {
            let text = format!("booked {party} on {date}");
            Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
        }
    }
}

#[tool_router]
impl Booker {
    #[tool(description = "Books a table: asks for a date, then for confirmation")]
    async fn book(
        &self,
        Parameters { params, pending }: Parameters<BookArgs>,
    ) -> Result<CallToolResponse, ErrorData> {
        Declared::from_capabilities(pending.capabilities()).require_form()?;
        let party = params.party;
        pending.run(|call| book_round(call, party)).await
    }

    #[tool(description = "The booking flow with rounds that await (a ledger lookup)")]
    async fn book_async(
        &self,
        Parameters { params, pending }: Parameters<BookArgs>,
    ) -> Result<CallToolResponse, ErrorData> {
        Declared::from_capabilities(pending.capabilities()).require_form()?;
        let ledger = self.ledger.clone();
        pending
            .run_async(|call: &mrtr_rmcp::Call| {
                let ledger = ledger.clone();
                Box::pin(async move {
                    // A lookup that really suspends the round: a lock held across an await.
                    let mut rounds = ledger.lock().await;
                    tokio::task::yield_now().await;
                    *rounds += 1;
                    book_round(call, params.party)
                })
            })
            .await
    }

    #[tool(description = "Pauses on every round, with state only")]
    async fn forever(
        &self,
        Parameters { pending, .. }: Parameters<rmcp::model::JsonObject>,
    ) -> Result<CallToolResponse, ErrorData> {
        pending
            .run(|call| {
                let n = call.state::<u32>()?.unwrap_or(0);
                Ok(call.retry(&(n + 1))?.into())
            })
            .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Booker {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(&[
            ProtocolVersion::V_2026_07_28,
            ProtocolVersion::V_2025_11_25,
            ProtocolVersion::V_2025_06_18,
        ])
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.mrtr.caller(&ctx);
        self.grants.subscribe(&request.uri, &caller, &ctx).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.grants.unsubscribe(&request.uri, &ctx);
        Ok(())
    }
}

async fn start(max_rounds: u32) -> (support::Served, Booker, Policy) {
    start_with_idle(max_rounds, Duration::from_secs(300)).await
}

async fn start_with_idle(max_rounds: u32, idle: Duration) -> (support::Served, Booker, Policy) {
    let policy = Policy {
        allow: Arc::new(AtomicBool::new(true)),
        checks: Arc::default(),
    };
    let p = policy.clone();
    let authorizer = move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        p.checks.fetch_add(1, Ordering::SeqCst);
        Ok(
            if p.allow.load(Ordering::SeqCst) && !ctx.caller().is_anonymous() {
                Authorization::Allowed(Grant::for_duration(ctx, Duration::from_secs(4)))
            } else {
                Authorization::Denied
            },
        )
    };
    let registry = Registry::new(
        StdMonotonicClock::new(),
        Arc::new(authorizer),
        RegistryConfig::default(),
    );
    let grants = ResourceGrants::new(RegistryHandle::spawn(registry));
    let server = Booker {
        tool_router: Booker::tool_router(),
        mrtr: support::mrtr(max_rounds),
        grants: grants.clone(),
        ledger: Arc::default(),
    };
    let served = serve_dual(server.clone(), grants, idle).await;
    (served, server, policy)
}

/// A 2025-era client: answers elicitations from a script (none: no capability declared),
/// records resource updates.
#[derive(Clone)]
struct User2025 {
    answers: Option<Arc<Mutex<Vec<serde_json::Value>>>>,
    asked: Arc<AtomicUsize>,
    updates: Arc<Mutex<Vec<String>>>,
    version: ProtocolVersion,
}

impl User2025 {
    fn new(answers: Option<Vec<serde_json::Value>>, version: ProtocolVersion) -> Self {
        Self {
            answers: answers.map(|mut a| {
                a.reverse();
                Arc::new(Mutex::new(a))
            }),
            asked: Arc::default(),
            updates: Arc::default(),
            version,
        }
    }
}

impl ClientHandler for User2025 {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities = if self.answers.is_some() {
            serde_json::from_value(json!({"elicitation": {}})).unwrap()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new("mrtr-2025", "1"))
            .with_protocol_version(self.version.clone())
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _ctx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let next = self.answers.as_ref().and_then(|a| a.lock().unwrap().pop());
        let mut result = ElicitResult::new(ElicitationAction::Accept);
        result.content = next;
        Ok(result)
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        self.updates.lock().unwrap().push(params.uri);
    }
}

/// `handler` connected with `lifecycle`, as alice. A 404 for its session is an error (rmcp's
/// client would otherwise initialize a new session by itself).
async fn connect(
    url: &str,
    handler: User2025,
    lifecycle: ClientLifecycleMode,
) -> RunningService<RoleClient, User2025> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .auth_header("alice".to_owned())
        .reinit_on_expired_session(false);
    handler
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            lifecycle,
        )
        .await
        .unwrap()
}

async fn session_2025(url: &str, handler: User2025) -> RunningService<RoleClient, User2025> {
    connect(url, handler, ClientLifecycleMode::Initialize).await
}

fn text(result: &CallToolResult) -> String {
    result.content[0].as_text().unwrap().text.clone()
}

fn book_call(party: u32) -> CallToolRequestParams {
    CallToolRequestParams::new("book").with_arguments(
        json!({"party": party})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_flow_both_eras() {
    let (served, _, _) = start(10).await;
    // 2026-07-28: MRTR rounds, which rmcp's client drives with the same answers.
    let answers = vec![json!({"date": "2026-12-25"}), json!({"confirm": "yes"})];
    let handler = User2025::new(Some(answers), ProtocolVersion::V_2026_07_28);
    let asked = handler.asked.clone();
    let discover = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let modern = connect(&served.url, handler, discover).await;
    let r = modern.call_tool(book_call(2)).await.unwrap();
    assert_eq!(text(&r), "booked 2 on 2026-12-25");
    assert_eq!(asked.load(Ordering::SeqCst), 2, "two input_required rounds");
    // 2025-11-25 and 2025-06-18 sessions: the same flow, asked through elicitation/create.
    for version in [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2025_06_18] {
        let answers = vec![json!({"date": "2026-12-24"}), json!({"confirm": "yes"})];
        let handler = User2025::new(Some(answers), version.clone());
        let asked = handler.asked.clone();
        let client = session_2025(&served.url, handler).await;
        let negotiated = client.peer_info().map(|i| i.protocol_version.clone());
        assert_eq!(negotiated, Some(version));
        let r = client.call_tool(book_call(4)).await.unwrap();
        assert_eq!(text(&r), "booked 4 on 2026-12-24");
        assert_eq!(
            asked.load(Ordering::SeqCst),
            2,
            "two server-to-client requests"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_that_await_run_in_both_eras() {
    let (served, server, _) = start(10).await;
    let mut call = book_call(3);
    call.name = "book_async".into();
    let answers = vec![json!({"date": "2026-12-26"}), json!({"confirm": "yes"})];
    let discover = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let handler = User2025::new(Some(answers), ProtocolVersion::V_2026_07_28);
    let modern = connect(&served.url, handler, discover).await;
    let r = modern.call_tool(call.clone()).await.unwrap();
    assert_eq!(text(&r), "booked 3 on 2026-12-26");
    // Three rounds: two that paused, one that completed; each awaited the ledger.
    assert_eq!(*server.ledger.lock().await, 3);
    let answers = vec![json!({"date": "2026-12-27"}), json!({"confirm": "yes"})];
    let client = session_2025(
        &served.url,
        User2025::new(Some(answers), ProtocolVersion::V_2025_11_25),
    )
    .await;
    let r = client.call_tool(call).await.unwrap();
    assert_eq!(text(&r), "booked 3 on 2026-12-27");
    assert_eq!(*server.ledger.lock().await, 6);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flows_of_2025_sessions_keep_the_round_cap_and_need_the_capability() {
    let (served, _, _) = start(4).await;
    let client = session_2025(
        &served.url,
        User2025::new(Some(vec![]), ProtocolVersion::V_2025_11_25),
    )
    .await;
    let forever = CallToolRequestParams::new("forever");
    let e = mcp_error(client.call_tool(forever).await);
    assert_eq!(e.code.0, -32602, "the round cap's rejection: {e:?}");
    client.cancel().await.unwrap();
    // No elicitation declared at initialize: -32021 naming it, nothing asked.
    let handler = User2025::new(None, ProtocolVersion::V_2025_11_25);
    let asked = handler.asked.clone();
    let client = session_2025(&served.url, handler).await;
    let e = mcp_error(client.call_tool(book_call(2)).await);
    assert_eq!(e.code.0, -32021, "{e:?}");
    assert!(e.data.unwrap().to_string().contains("elicitation"));
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_deliver_release_quietly_and_a_denial_retires_the_session() {
    let (served, server, policy) = start(10).await;
    let handler = User2025::new(Some(vec![]), ProtocolVersion::V_2025_11_25);
    let updates = handler.updates.clone();
    let client = session_2025(&served.url, handler).await;
    client
        .subscribe(SubscribeRequestParams::new(REPORT))
        .await
        .unwrap();
    assert_eq!(policy.checks.load(Ordering::SeqCst), 1);
    // Delivered while the grant holds (the client's GET stream may take a moment to open).
    let mut delivered = 0;
    for _ in 0..100 {
        delivered += server.grants.notify_updated(REPORT).await;
        if !updates.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(delivered >= 1);
    assert_eq!(updates.lock().unwrap()[0], REPORT);
    // Unsubscribe: no check, nothing delivered, the session lives on.
    client
        .unsubscribe(UnsubscribeRequestParams::new(REPORT))
        .await
        .unwrap();
    assert_eq!(policy.checks.load(Ordering::SeqCst), 1);
    assert_eq!(server.grants.notify_updated(REPORT).await, 0);
    client.list_tools(None).await.unwrap();
    // A denied initial subscribe: -32002, the session lives on.
    policy.allow.store(false, Ordering::SeqCst);
    let e = mcp_error(client.subscribe(SubscribeRequestParams::new(REPORT)).await);
    assert_eq!(e.code, SUBSCRIBE_DENIED);
    client.list_tools(None).await.unwrap();
    // A grant denied on reconciliation retires the session: its requests fail from then on.
    policy.allow.store(true, Ordering::SeqCst);
    client
        .subscribe(SubscribeRequestParams::new(REPORT))
        .await
        .unwrap();
    policy.allow.store(false, Ordering::SeqCst);
    let registry = server.grants.registry();
    let reconciled = registry.reconcile_matching(&Selector::Subject("alice".into()));
    assert_eq!(reconciled, 1);
    let mut gone = false;
    for _ in 0..100 {
        if client.list_tools(None).await.is_err() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the session was not retired");
    assert_eq!(server.grants.sessions_with_grants(), 0);
    assert_eq!(registry.with_registry(|r| r.counters().sessions_retired), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_idles_out_releases_its_grants_and_is_checked_no_more() {
    let (served, server, policy) = start_with_idle(10, Duration::from_millis(300)).await;
    let mut session = RawSession::open(&served.url, "alice").await;
    let (status, body) = session
        .request("alice", "resources/subscribe", json!({"uri": REPORT}))
        .await;
    assert_eq!((status, &body["result"]), (200, &json!({})), "{body}");
    assert_eq!(server.grants.sessions_with_grants(), 1);
    // The client falls silent, without a DELETE: rmcp ends the session after 300 ms.
    let mut released = false;
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if server.grants.sessions_with_grants() == 0 {
            released = true;
            break;
        }
    }
    assert!(released, "an idle session kept its grant");
    let registry = server.grants.registry();
    assert_eq!(
        registry.with_registry(|r| r.len()),
        0,
        "the grant is still registered"
    );
    // No authorizer call for a session nobody uses (the 4 s grant would renew otherwise).
    let checks = policy.checks.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(policy.checks.load(Ordering::SeqCst), checks);
    // Its id is gone: 404, the client must initialize again.
    let (status, _) = session.request("alice", "tools/list", json!({})).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_belongs_to_the_caller_that_opened_it() {
    let (served, server, _) = start(10).await;
    let mut session = RawSession::open(&served.url, "alice").await;
    let (status, body) = session
        .request("alice", "resources/subscribe", json!({"uri": REPORT}))
        .await;
    assert_eq!((status, &body["result"]), (200, &json!({})), "{body}");
    // Bob (and an anonymous caller) holding alice's session id: every method answers as for
    // an unknown id, and nothing happens to alice's session.
    let mut unknown = RawSession::open(&served.url, "bob").await;
    unknown.id = "00000000-0000-0000-0000-000000000000".into();
    let (_, unknown_body) = unknown.request("bob", "tools/list", json!({})).await;
    for intruder in ["bob", "nobody"] {
        let (status, body) = session.request(intruder, "tools/list", json!({})).await;
        assert_eq!((status, &body), (404, &unknown_body), "{intruder} posted");
        let unsubscribe = json!({"uri": REPORT});
        let (status, _) = session
            .request(intruder, "resources/unsubscribe", unsubscribe)
            .await;
        assert_eq!(status, 404, "{intruder} unsubscribed");
        assert_eq!(
            session.get(intruder).await,
            404,
            "{intruder} opened the stream"
        );
        assert_eq!(session.delete(intruder).await, 404, "{intruder} deleted");
    }
    assert_eq!(server.grants.sessions_with_grants(), 1);
    let (status, body) = session.request("alice", "tools/list", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["result"]["tools"].is_array(), "{body}");
    // Alice ends it: the grant and the binding go, and the id is nobody's.
    assert!((200..300).contains(&session.delete("alice").await));
    assert_eq!(server.grants.sessions_with_grants(), 0);
    let (status, _) = session.request("alice", "tools/list", json!({})).await;
    assert_eq!(status, 404);
}
