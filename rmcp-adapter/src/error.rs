//! mrtr's JSON-RPC errors as rmcp's [`ErrorData`].
//!
//! The orphan rule forbids `From<JsonRpcError> for ErrorData` anywhere but in `rmcp` or
//! `mrtr-std`, so the conversion is a trait of this crate: `use mrtr_rmcp::ToErrorData` and
//! call `.to_error_data()`. Every API of this crate already returns `ErrorData`.

use mrtr_std::engine::PauseError;
use mrtr_std::jsonrpc::JsonRpcError;
use rmcp::model::{ErrorCode, ErrorData};

/// Converts mrtr's errors into rmcp's.
///
/// ```
/// use mrtr_rmcp::ToErrorData;
/// use mrtr_std::jsonrpc::JsonRpcError;
///
/// let e = JsonRpcError::invalid_params("Invalid params: params.name must be a string");
/// let data = e.to_error_data();
/// assert_eq!(data.code.0, -32602);
/// assert_eq!(data.message, "Invalid params: params.name must be a string");
/// ```
pub trait ToErrorData {
    /// The error object rmcp answers with.
    fn to_error_data(&self) -> ErrorData;
}

impl ToErrorData for JsonRpcError {
    fn to_error_data(&self) -> ErrorData {
        ErrorData::new(
            ErrorCode(self.code()),
            self.message().to_owned(),
            self.data().cloned(),
        )
    }
}

impl ToErrorData for PauseError {
    /// At the round cap, the max-rounds rejection; unbindable arguments, `-32602` naming the
    /// problem; a server fault, `-32603` (the detail is in the server's log).
    fn to_error_data(&self) -> ErrorData {
        JsonRpcError::from(self.clone()).to_error_data()
    }
}
