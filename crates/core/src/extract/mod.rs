//! Request extractors that answer bad input with a clear 4xx, never a 500 and
//! never actix's default text/plain body.
//!
//! - [`Json`]: body as JSON; malformed JSON, wrong types, unknown enum values and
//!   validation failures answer 400 with a message that names the field and an
//!   `issues` array; a body over the limit answers 413.
//! - [`Query`]: the query string (repeated keys fill a `Vec`); 400 naming the parameter.
//! - [`Form`]: an `application/x-www-form-urlencoded` body (a JSON body is accepted
//!   too, for API clients); 400 naming the field, 413 when too large.
//! - [`Path`]: path parameters; 400 naming the parameter (e.g. a malformed uuid).
//!
//! Every extracted value is validated with `validator`; types without rules derive
//! `Validate` with no attributes. Before deserializing, every extractor refuses
//! control characters (NUL and the other C0 controls, DEL; tab/LF/CR are
//! allowed in body text): 400 naming the field. Handlers that parse a
//! raw body themselves call [`check_json_body`] / [`check_form_body`] first.
//!
//! Body errors (JSON, form) answer `{error: "Invalid input", issues, details:
//! {formErrors, fieldErrors}}`, the shape Open Mercato's clients map onto form
//! fields; query and path errors name the parameter in `error` as well.

/// `into_inner` and `Deref` for an extractor newtype `Name<T>(pub T)`.
macro_rules! wrapper {
    ($name:ident) => {
        impl<T> $name<T> {
            pub fn into_inner(self) -> T {
                self.0
            }
        }

        impl<T> std::ops::Deref for $name<T> {
            type Target = T;
            fn deref(&self) -> &T {
                &self.0
            }
        }
    };
}
pub(crate) use wrapper;

pub(crate) mod body;
mod form;
mod issues;
mod json;
mod path;
mod query;
mod text;

pub use body::BodyLimit;
pub use form::Form;
pub use issues::{issues_from_validation, validate};
pub use json::{Json, parse_json};
pub use path::Path;
pub use query::Query;
pub use text::{CONTROL_CHARACTERS, TextRule, check_form_body, check_json_body, is_forbidden};
