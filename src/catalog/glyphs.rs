//! The alphabet of GPU names, and the characters that only look like it.
//!
//! Names are compared after Unicode NFKC normalisation, so a full-width "ＲＴＸ" or a
//! ligature reads as the ASCII letters it stands for. After it, a GPU name is written
//! in printable ASCII (letters, digits, space and punctuation: the characters of every
//! built-in name and alias, plus the separators people type, "_", ".", "/"). Any other
//! character is refused, never dropped: name matching ignores what is not a letter or
//! a digit, so a Cyrillic "Т" or a zero-width space would vanish and "RTX 3090 Ті"
//! (Cyrillic) would become the RTX 3090. The error names the character by code point
//! and, for the letters that pass for Latin ones (the Cyrillic and Greek capitals and
//! small letters in the table below, the usual spoofing set) and the invisible
//! formatting characters, by its Unicode name.
//!
//! The table is written here rather than taken from a crate of Unicode names (about
//! 1 MB of data for 150,000 names, of which a GPU name's error needs the few dozen that
//! pass for Latin letters or cannot be seen); other characters are named by their
//! script block.

use std::borrow::Cow;
use unicode_normalization::UnicodeNormalization;

/// (character, the Latin letter it passes for, its Unicode name).
const LOOK_ALIKES: &[(char, char, &str)] = &[
    ('\u{0391}', 'A', "GREEK CAPITAL LETTER ALPHA"),
    ('\u{0392}', 'B', "GREEK CAPITAL LETTER BETA"),
    ('\u{0395}', 'E', "GREEK CAPITAL LETTER EPSILON"),
    ('\u{0396}', 'Z', "GREEK CAPITAL LETTER ZETA"),
    ('\u{0397}', 'H', "GREEK CAPITAL LETTER ETA"),
    ('\u{0399}', 'I', "GREEK CAPITAL LETTER IOTA"),
    ('\u{039A}', 'K', "GREEK CAPITAL LETTER KAPPA"),
    ('\u{039C}', 'M', "GREEK CAPITAL LETTER MU"),
    ('\u{039D}', 'N', "GREEK CAPITAL LETTER NU"),
    ('\u{039F}', 'O', "GREEK CAPITAL LETTER OMICRON"),
    ('\u{03A1}', 'P', "GREEK CAPITAL LETTER RHO"),
    ('\u{03A4}', 'T', "GREEK CAPITAL LETTER TAU"),
    ('\u{03A5}', 'Y', "GREEK CAPITAL LETTER UPSILON"),
    ('\u{03A7}', 'X', "GREEK CAPITAL LETTER CHI"),
    ('\u{03B1}', 'a', "GREEK SMALL LETTER ALPHA"),
    ('\u{03B9}', 'i', "GREEK SMALL LETTER IOTA"),
    ('\u{03BD}', 'v', "GREEK SMALL LETTER NU"),
    ('\u{03BF}', 'o', "GREEK SMALL LETTER OMICRON"),
    ('\u{03C1}', 'p', "GREEK SMALL LETTER RHO"),
    ('\u{0405}', 'S', "CYRILLIC CAPITAL LETTER DZE"),
    (
        '\u{0406}',
        'I',
        "CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I",
    ),
    ('\u{0408}', 'J', "CYRILLIC CAPITAL LETTER JE"),
    ('\u{0410}', 'A', "CYRILLIC CAPITAL LETTER A"),
    ('\u{0412}', 'B', "CYRILLIC CAPITAL LETTER VE"),
    ('\u{0415}', 'E', "CYRILLIC CAPITAL LETTER IE"),
    ('\u{041A}', 'K', "CYRILLIC CAPITAL LETTER KA"),
    ('\u{041C}', 'M', "CYRILLIC CAPITAL LETTER EM"),
    ('\u{041D}', 'H', "CYRILLIC CAPITAL LETTER EN"),
    ('\u{041E}', 'O', "CYRILLIC CAPITAL LETTER O"),
    ('\u{0420}', 'P', "CYRILLIC CAPITAL LETTER ER"),
    ('\u{0421}', 'C', "CYRILLIC CAPITAL LETTER ES"),
    ('\u{0422}', 'T', "CYRILLIC CAPITAL LETTER TE"),
    ('\u{0423}', 'Y', "CYRILLIC CAPITAL LETTER U"),
    ('\u{0425}', 'X', "CYRILLIC CAPITAL LETTER HA"),
    ('\u{0430}', 'a', "CYRILLIC SMALL LETTER A"),
    ('\u{0435}', 'e', "CYRILLIC SMALL LETTER IE"),
    ('\u{043E}', 'o', "CYRILLIC SMALL LETTER O"),
    ('\u{0440}', 'p', "CYRILLIC SMALL LETTER ER"),
    ('\u{0441}', 'c', "CYRILLIC SMALL LETTER ES"),
    ('\u{0443}', 'y', "CYRILLIC SMALL LETTER U"),
    ('\u{0445}', 'x', "CYRILLIC SMALL LETTER HA"),
    ('\u{0455}', 's', "CYRILLIC SMALL LETTER DZE"),
    (
        '\u{0456}',
        'i',
        "CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I",
    ),
    ('\u{0458}', 'j', "CYRILLIC SMALL LETTER JE"),
    ('\u{04BB}', 'h', "CYRILLIC SMALL LETTER SHHA"),
    ('\u{0501}', 'd', "CYRILLIC SMALL LETTER KOMI DE"),
    ('\u{051B}', 'q', "CYRILLIC SMALL LETTER QA"),
    ('\u{051D}', 'w', "CYRILLIC SMALL LETTER WE"),
];

/// Characters that show nothing (or change the direction of what follows) and that
/// NFKC keeps: (character, its Unicode name).
const INVISIBLE: &[(char, &str)] = &[
    ('\u{00AD}', "SOFT HYPHEN"),
    ('\u{034F}', "COMBINING GRAPHEME JOINER"),
    ('\u{061C}', "ARABIC LETTER MARK"),
    ('\u{180E}', "MONGOLIAN VOWEL SEPARATOR"),
    ('\u{200B}', "ZERO WIDTH SPACE"),
    ('\u{200C}', "ZERO WIDTH NON-JOINER"),
    ('\u{200D}', "ZERO WIDTH JOINER"),
    ('\u{200E}', "LEFT-TO-RIGHT MARK"),
    ('\u{200F}', "RIGHT-TO-LEFT MARK"),
    ('\u{202A}', "LEFT-TO-RIGHT EMBEDDING"),
    ('\u{202B}', "RIGHT-TO-LEFT EMBEDDING"),
    ('\u{202C}', "POP DIRECTIONAL FORMATTING"),
    ('\u{202D}', "LEFT-TO-RIGHT OVERRIDE"),
    ('\u{202E}', "RIGHT-TO-LEFT OVERRIDE"),
    ('\u{2060}', "WORD JOINER"),
    ('\u{2061}', "FUNCTION APPLICATION"),
    ('\u{2062}', "INVISIBLE TIMES"),
    ('\u{2063}', "INVISIBLE SEPARATOR"),
    ('\u{2064}', "INVISIBLE PLUS"),
    ('\u{2066}', "LEFT-TO-RIGHT ISOLATE"),
    ('\u{2067}', "RIGHT-TO-LEFT ISOLATE"),
    ('\u{2068}', "FIRST STRONG ISOLATE"),
    ('\u{2069}', "POP DIRECTIONAL ISOLATE"),
    ('\u{FEFF}', "ZERO WIDTH NO-BREAK SPACE"),
];

/// Script blocks, for a character neither table names: (first, last, block).
const BLOCKS: &[(u32, u32, &str)] = &[
    (0x0000, 0x001F, "a control character"),
    (0x007F, 0x009F, "a control character"),
    (0x00A0, 0x024F, "a Latin letter or sign outside ASCII"),
    (0x0250, 0x02FF, "a phonetic letter or modifier"),
    (0x0300, 0x036F, "a combining mark"),
    (0x0370, 0x03FF, "a Greek letter"),
    (0x0400, 0x052F, "a Cyrillic letter"),
    (0x0530, 0x058F, "an Armenian letter"),
    (0x0590, 0x05FF, "a Hebrew letter"),
    (0x0600, 0x06FF, "an Arabic letter"),
    (0x0900, 0x0DFF, "an Indic letter"),
    (0x0E00, 0x0E7F, "a Thai letter"),
    (0x10A0, 0x10FF, "a Georgian letter"),
    (0x1100, 0x11FF, "a Hangul letter"),
    (0x13A0, 0x13FF, "a Cherokee letter"),
    (0x1D00, 0x1DBF, "a phonetic letter"),
    (0x1E00, 0x1EFF, "a Latin letter with a mark"),
    (0x1F00, 0x1FFF, "a Greek letter"),
    (0x2000, 0x206F, "a punctuation or spacing character"),
    (0x2070, 0x209F, "a superscript or subscript"),
    (0x20A0, 0x20CF, "a currency sign"),
    (0x2100, 0x214F, "a letter-like symbol"),
    (0x2150, 0x218F, "a number form"),
    (0x2190, 0x2BFF, "a symbol"),
    (0x2C00, 0x2DFF, "a letter of a historic or extended script"),
    (0x2E80, 0x9FFF, "a CJK character"),
    (0xA000, 0xABFF, "a letter of another script"),
    (0xAC00, 0xD7FF, "a Hangul syllable"),
    (0xE000, 0xF8FF, "a private-use character"),
    (0xF900, 0xFAFF, "a CJK character"),
    (0xFB00, 0xFDFF, "a presentation form"),
    (0xFE00, 0xFE0F, "a variation selector"),
    (0xFE20, 0xFE2F, "a combining mark"),
    (0xFE30, 0xFFEF, "a presentation or half/full-width form"),
    (0xFFF0, 0xFFFF, "a special character"),
    (0x1D400, 0x1D7FF, "a mathematical letter"),
    (0x1F000, 0x1FAFF, "an emoji or pictograph"),
    (0xE0000, 0xE007F, "a tag character"),
    (0xE0100, 0xE01EF, "a variation selector"),
];

/// Whether GPU names are written with `c` (after NFKC): printable ASCII.
pub fn is_name_char(c: char) -> bool {
    (' '..='~').contains(&c)
}

/// `name` as names are compared: NFKC-normalised (borrowed when it is ASCII
/// already), or the first character no GPU name is written with.
pub fn comparable(name: &str) -> Result<Cow<'_, str>, char> {
    let form: Cow<'_, str> = if name.is_ascii() {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(name.nfkc().collect())
    };
    match form.chars().find(|&c| !is_name_char(c)) {
        Some(c) => Err(c),
        None => Ok(form),
    }
}

/// The Latin letter `c` passes for, if it is one of the look-alikes.
pub fn looks_like(c: char) -> Option<char> {
    LOOK_ALIKES
        .iter()
        .find(|(x, _, _)| *x == c)
        .map(|(_, l, _)| *l)
}

/// `name` read as it looks: NFKC, each look-alike as the Latin letter it passes
/// for, invisible characters removed, any other character outside the alphabet as a
/// space. What a user who typed it most likely meant, for suggestions only.
pub fn as_it_looks(name: &str) -> String {
    name.nfkc()
        .filter_map(|c| {
            if is_name_char(c) {
                Some(c)
            } else if let Some(l) = looks_like(c) {
                Some(l)
            } else if INVISIBLE.iter().any(|(x, _)| *x == c) || c.is_control() {
                None
            } else {
                Some(' ')
            }
        })
        .collect()
}

/// "'Т' (U+0422 CYRILLIC CAPITAL LETTER TE, which looks like the Latin 'T')", or for
/// a character that cannot be shown, "an invisible character (U+200B ZERO WIDTH
/// SPACE)", or "'я' (U+044F, a Cyrillic letter)".
pub fn describe(c: char) -> String {
    let code = format!("U+{:04X}", c as u32);
    if let Some((_, l, n)) = LOOK_ALIKES.iter().find(|(x, _, _)| *x == c) {
        return format!("'{c}' ({code} {n}, which looks like the Latin '{l}')");
    }
    if let Some((_, n)) = INVISIBLE.iter().find(|(x, _)| *x == c) {
        return format!("an invisible character ({code} {n})");
    }
    let block = BLOCKS
        .iter()
        .find(|(lo, hi, _)| (*lo..=*hi).contains(&(c as u32)))
        .map_or("a character outside the ASCII letters", |(_, _, b)| b);
    if c.is_control() || c.is_whitespace() || (0xFE00..=0xFE0F).contains(&(c as u32)) {
        format!("{block} ({code})")
    } else {
        format!("'{c}' ({code}, {block})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nfkc_forms_and_refusals() {
        assert_eq!(comparable("RTX 4090").unwrap(), "RTX 4090");
        // full-width letters and digits are ASCII after NFKC
        assert_eq!(comparable("ＲＴＸ ４０９０").unwrap(), "RTX 4090");
        assert_eq!(comparable("RTX 3090 \u{0422}i"), Err('\u{0422}'));
        assert_eq!(comparable("RTX\u{200B} 3090"), Err('\u{200B}'));
        assert_eq!(comparable("RTX\t3090"), Err('\t'));
        assert_eq!(as_it_looks("RTX 3090 \u{0422}\u{0456}"), "RTX 3090 Ti");
        assert_eq!(as_it_looks("RTX\u{200B} 3090"), "RTX 3090");
        assert_eq!(
            describe('\u{0422}'),
            "'\u{0422}' (U+0422 CYRILLIC CAPITAL LETTER TE, which looks like the Latin 'T')"
        );
        assert_eq!(
            describe('\u{200B}'),
            "an invisible character (U+200B ZERO WIDTH SPACE)"
        );
        assert_eq!(
            describe('\u{044F}'),
            "'\u{044F}' (U+044F, a Cyrillic letter)"
        );
        assert_eq!(describe('\u{1}'), "a control character (U+0001)");
        // every look-alike is outside the alphabet, and passes for a letter in it
        for (c, l, _) in LOOK_ALIKES {
            assert!(comparable(&c.to_string()).is_err(), "{c}");
            assert!(l.is_ascii_alphabetic(), "{c}");
        }
        for (c, _) in INVISIBLE {
            assert!(comparable(&c.to_string()).is_err(), "{c:?}");
        }
    }
}
