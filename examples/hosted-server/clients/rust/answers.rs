//! A client handler that answers elicitations from a script and records the questions.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData, Implementation,
};
use rmcp::service::{RequestContext, RoleClient};
use serde_json::Value;

/// Scripted answers (`None`: decline) and the questions asked so far.
#[derive(Clone, Default)]
pub struct Answers {
    script: Arc<Mutex<VecDeque<Option<Value>>>>,
    questions: Arc<Mutex<Vec<String>>>,
}

impl Answers {
    /// Answers `script` in order.
    pub fn new(script: impl IntoIterator<Item = Option<Value>>) -> Self {
        Self {
            script: Arc::new(Mutex::new(script.into_iter().collect())),
            questions: Arc::default(),
        }
    }

    /// The questions asked so far.
    pub fn questions(&self) -> Vec<String> {
        self.questions.lock().map(|q| q.clone()).unwrap_or_default()
    }

    /// The next scripted answer for `question`.
    pub fn next(&self, question: &str) -> Option<Value> {
        if let Ok(mut q) = self.questions.lock() {
            q.push(question.to_owned());
        }
        self.script
            .lock()
            .ok()
            .and_then(|mut s| s.pop_front())
            .flatten()
    }

    /// The answer as an elicitation result.
    pub fn result(answer: Option<Value>) -> ElicitResult {
        match answer {
            Some(content) => ElicitResult::new(ElicitationAction::Accept).with_content(content),
            None => ElicitResult::new(ElicitationAction::Decline),
        }
    }
}

impl ClientHandler for Answers {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities =
            serde_json::from_value(serde_json::json!({"elicitation": {"form": {}}}))
                .unwrap_or_default();
        ClientConfig::new(
            caps,
            Implementation::new("mrtr-rmcp-client", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _ctx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match &request {
            ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        Ok(Self::result(self.next(&message)))
    }
}
