//! HTTP tests of stoa-attachments against a real database.
//!
//! Test functions may unwrap (`allow-unwrap-in-tests` in clippy.toml); a
//! module whose helpers do too says so with `#[expect]` and a reason.

mod api {
    #[expect(
        clippy::unwrap_used,
        reason = "the attack helpers fail the calling test by panicking"
    )]
    pub mod attacks;
    #[expect(
        clippy::unwrap_used,
        reason = "the document builders fail the calling test by panicking"
    )]
    pub mod extraction;
    pub mod files;
    pub mod images;
    pub mod library;
    pub mod partitions;
    pub mod s3;
    #[expect(
        clippy::unwrap_used,
        reason = "shared helpers fail the calling test by panicking"
    )]
    pub mod support;
    pub mod uploads;
}
