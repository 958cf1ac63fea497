//! Names people read: refusing characters that hide or fake what a name says.
//!
//! A role named `superadmin` followed by a zero-width space, or one whose
//! letters are full-width forms, reads as the real `superadmin` in every list
//! and dialog while being another role; a right-to-left override (U+202E)
//! after `admin` shows the rest of the name backwards. Names shown to other
//! users therefore refuse invisible, control and formatting characters
//! ([`hidden_character`], [`validate_name`] for `#[validate(custom)]`), and
//! names that must not look like one another are compared and stored in
//! NFKC form ([`normalize_name`]: full-width, ligature and other
//! compatibility forms become their plain letters).
//!
//! Not covered: letters of other scripts that look alike (Cyrillic `а` for
//! Latin `a`); those are ordinary letters of real names.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;
use unicode_properties::general_category::{GeneralCategory, UnicodeGeneralCategory};
use validator::ValidationError;

/// Characters that show nothing (or a blank) but are letters or marks, so
/// their general category alone does not give them away.
fn invisible_filler(c: char) -> bool {
    matches!(
        c,
        '\u{034F}'                      // combining grapheme joiner
            | '\u{115F}' | '\u{1160}'   // Hangul choseong / jungseong fillers
            | '\u{17B4}' | '\u{17B5}'   // Khmer inherent vowels
            | '\u{180B}'..='\u{180F}'   // Mongolian variation selectors, vowel separator
            | '\u{2800}'                // braille pattern blank
            | '\u{3164}'                // Hangul filler
            | '\u{FE00}'..='\u{FE0F}'   // variation selectors
            | '\u{FFA0}'                // half-width Hangul filler
            | '\u{E0100}'..='\u{E01EF}' // variation selectors supplement
    )
}

/// The first character of `value` that hides or reorders text: a control
/// character (`Cc`: NUL, newline, escape), a format character (`Cf`: zero-width
/// spaces and joiners, bidi embeddings, overrides and isolates, the soft
/// hyphen, tag characters), a line or paragraph separator, a private-use or
/// surrogate code point, or an invisible filler letter.
pub fn hidden_character(value: &str) -> Option<char> {
    value.chars().find(|&c| {
        invisible_filler(c)
            || matches!(
                c.general_category(),
                GeneralCategory::Control
                    | GeneralCategory::Format
                    | GeneralCategory::LineSeparator
                    | GeneralCategory::ParagraphSeparator
                    | GeneralCategory::PrivateUse
                    | GeneralCategory::Surrogate
            )
    })
}

/// The message naming what was refused, e.g. `must not contain invisible,
/// control or formatting characters (U+200B)`.
pub fn hidden_character_message(c: char) -> String {
    format!(
        "must not contain invisible, control or formatting characters (U+{:04X})",
        u32::from(c)
    )
}

/// For `#[validate(custom(function = "stoa_core::text::validate_name"))]`:
/// refuses a name with a [`hidden_character`] (code `hidden_character`).
pub fn validate_name(value: &str) -> Result<(), ValidationError> {
    match hidden_character(value) {
        Some(c) => Err(ValidationError::new("hidden_character")
            .with_message(Cow::Owned(hidden_character_message(c)))),
        None => Ok(()),
    }
}

/// `value` in NFKC form, trimmed, with every run of whitespace made one
/// space: `ｓｕｐｅｒａｄｍｉｎ` and `super  admin` become `superadmin` and
/// `super admin`. Check [`hidden_character`] first (NFKC keeps them).
pub fn normalize_name(value: &str) -> String {
    let folded: String = value.nfkc().collect();
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_found() {
        for name in [
            "superadmin\u{200B}",
            "super\u{200D}admin",
            "admin\u{202E}nimda",
            "admin\u{2066}x\u{2069}",
            "ad\u{00AD}min",
            "admin\u{FEFF}",
            "admin\u{0000}",
            "admin\nroot",
            "admin\u{2028}",
            "admin\u{3164}",
            "admin\u{FE0F}",
            "admin\u{E0041}",
            "admin\u{E000}",
        ] {
            assert!(hidden_character(name).is_some(), "{name:?}");
            assert!(validate_name(name).is_err(), "{name:?}");
        }
        for name in [
            "Sales & Marketing",
            "Zoë Ångström",
            "山田 太郎",
            "O'Brien-Smith",
            "Team 🚀",
            "Ana María",
        ] {
            assert_eq!(hidden_character(name), None, "{name:?}");
        }
        assert_eq!(
            hidden_character_message('\u{200B}'),
            "must not contain invisible, control or formatting characters (U+200B)"
        );
    }

    #[test]
    fn names_are_folded_to_their_plain_form() {
        assert_eq!(normalize_name("ｓｕｐｅｒａｄｍｉｎ"), "superadmin");
        assert_eq!(
            normalize_name("  super \u{00A0}\u{3000} admin "),
            "super admin"
        );
        assert_eq!(normalize_name("ﬁnance"), "finance");
        assert_eq!(normalize_name("Zoë"), "Zoë");
    }
}
