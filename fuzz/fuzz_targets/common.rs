//! What several fuzz targets share (included as `mod common;`; not a target itself).

use cachecopy::FlushOp;

/// The flush instructions this CPU runs, detected once: `cpu()` executes CPUID (a VM exit each,
/// microseconds) on every call, which would cost more than the copy it picks for.
pub fn flush_ops() -> &'static [FlushOp] {
    static OPS: std::sync::OnceLock<Vec<FlushOp>> = std::sync::OnceLock::new();
    OPS.get_or_init(|| cachecopy::cpu().flush_ops().collect())
}
