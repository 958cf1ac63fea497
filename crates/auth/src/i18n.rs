//! The locale a request is served in: the `locale` cookie when it names a
//! supported locale, else the best supported match of `Accept-Language`,
//! else `en`. The helpers live in stoa-core ([`stoa_core::i18n`]), shared by
//! every module; re-exported here for stoa-auth's handlers.

pub use stoa_core::i18n::{DEFAULT_LOCALE, from_accept_language, request_locale};
