//! The canonical configuration key: the `config` column's one spelling, so that the
//! same work measured by two tools pairs up.
//!
//! Canonical form: parameters sorted by name (byte order), `name=value` joined by
//! `,` without spaces. A numeric value is printed as an integer when integral
//! (`256`, not `256.0`; `1e3` -> `1000`), otherwise as the shortest text that reads
//! back to the same f64; any other value is kept as trimmed text. A repeated name is
//! an error; an empty key is allowed. A cell that is not `name=value` pairs (free
//! text) is kept as trimmed text.

use std::fmt;

/// A configuration key that cannot be made canonical.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyError {
    /// The same parameter name appears twice.
    RepeatedName { name: String },
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::RepeatedName { name } => {
                write!(
                    f,
                    "parameter '{name}' appears twice in the configuration key"
                )
            }
        }
    }
}

impl std::error::Error for KeyError {}

/// A parameter value: a number or a text.
pub trait ParamValue {
    /// The value as it appears in a canonical key.
    fn key_text(&self) -> String;
}

impl ParamValue for f64 {
    fn key_text(&self) -> String {
        format_number(*self)
    }
}
impl ParamValue for &str {
    fn key_text(&self) -> String {
        format_value(self)
    }
}
impl ParamValue for String {
    fn key_text(&self) -> String {
        format_value(self)
    }
}
impl ParamValue for &String {
    fn key_text(&self) -> String {
        format_value(self)
    }
}
macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl ParamValue for $t {
            fn key_text(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
int_value!(u32, u64, usize, i32, i64);

/// A number as a key prints it. Rust's `Display` for f64 already prints the shortest
/// round-trip text without exponent and without `.0` for integral values; only the
/// sign of zero needs folding.
fn format_number(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    format!("{v}")
}

/// A cell value: numbers in canonical form, anything else trimmed. `inf` and `NaN`
/// parse as f64 but are not sizes: they stay text.
fn format_value(s: &str) -> String {
    let s = s.trim();
    // An integer keeps its digits: through f64, 2^53 + 1 would print as 2^53, a
    // number the file does not contain.
    if let Some(i) = integer_text(s) {
        return i;
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => format_number(v),
        _ => s.to_string(),
    }
}

/// An integer literal (`[+-]digits`) in canonical form: no sign for zero or a
/// positive number, no leading zeros. None for anything else.
fn integer_text(s: &str) -> Option<String> {
    let (negative, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let d = digits.trim_start_matches('0');
    Some(match (d.is_empty(), negative) {
        (true, _) => "0".to_string(),
        (false, true) => format!("-{d}"),
        (false, false) => d.to_string(),
    })
}

/// The canonical key of `params`. Names are expected to be distinct (callers build
/// them from maps); a repeated name keeps both pairs, and [`canonical_config`] of
/// the result reports it.
pub fn config_key<'a, V: ParamValue>(params: impl IntoIterator<Item = (&'a str, V)>) -> String {
    let mut pairs: Vec<(String, String)> = params
        .into_iter()
        .map(|(k, v)| (k.trim().to_string(), v.key_text()))
        .collect();
    pairs.sort();
    join(&pairs)
}

fn join(pairs: &[(String, String)]) -> String {
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(k);
        out.push('=');
        out.push_str(v);
    }
    out
}

/// The canonical form of a `config` cell (see the module doc). Empty parts
/// (`N=1,`) are ignored; a part without `=` or with an empty name makes the whole
/// cell free text, kept trimmed.
pub fn canonical_config(s: &str) -> Result<String, KeyError> {
    let text = s.trim();
    let mut pairs: Vec<(String, String)> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some((name, value)) = part.split_once('=') else {
            return Ok(text.to_string());
        };
        let name = name.trim();
        if name.is_empty() {
            return Ok(text.to_string());
        }
        pairs.push((name.to_string(), format_value(value)));
    }
    pairs.sort();
    if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(KeyError::RepeatedName {
            name: w[0].0.clone(),
        });
    }
    Ok(join(&pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_spacing_and_numbers() {
        let a = canonical_config("N=1,block=256").unwrap();
        assert_eq!(a, "N=1,block=256");
        assert_eq!(canonical_config(" block = 256 ,  N=1 ").unwrap(), a);
        assert_eq!(canonical_config("block=256.0,N=1e0").unwrap(), a);
        assert_eq!(
            canonical_config("rows=512,cols=512,block=256").unwrap(),
            "block=256,cols=512,rows=512"
        );
        assert_eq!(canonical_config("x=1e3").unwrap(), "x=1000");
        assert_eq!(canonical_config("x=0.1").unwrap(), "x=0.1");
        assert_eq!(canonical_config("x=2.50").unwrap(), "x=2.5");
        assert_eq!(canonical_config("x=-0.0").unwrap(), "x=0");
        assert_eq!(
            canonical_config("x=1e21").unwrap(),
            "x=1000000000000000000000"
        );
        assert_eq!(canonical_config("x=1e-7").unwrap(), "x=0.0000001");
        // byte order: upper case before lower case
        assert_eq!(canonical_config("b=1,K=2,a=3").unwrap(), "K=2,a=3,b=1");
    }

    #[test]
    fn text_values_free_text_and_empty() {
        assert_eq!(
            canonical_config("layout = NCHW , dtype=fp16").unwrap(),
            "dtype=fp16,layout=NCHW"
        );
        assert_eq!(canonical_config("x=inf,y=NaN").unwrap(), "x=inf,y=NaN");
        assert_eq!(canonical_config("  large run ").unwrap(), "large run");
        assert_eq!(canonical_config("N=1,large").unwrap(), "N=1,large");
        assert_eq!(canonical_config("=3").unwrap(), "=3");
        assert_eq!(canonical_config("").unwrap(), "");
        assert_eq!(canonical_config("  ").unwrap(), "");
        assert_eq!(canonical_config("N=1,").unwrap(), "N=1");
        assert_eq!(canonical_config("N=").unwrap(), "N=");
    }

    #[test]
    fn repeated_name_is_an_error() {
        let e = canonical_config("N=1,block=256,N=2").unwrap_err();
        assert_eq!(
            e,
            KeyError::RepeatedName {
                name: "N".to_string()
            }
        );
        assert_eq!(
            e.to_string(),
            "parameter 'N' appears twice in the configuration key"
        );
        assert!(canonical_config("N=1, N=1").is_err());
    }

    #[test]
    fn builder_matches_parser() {
        let k = config_key([("iters", 50.0), ("block", 256.0), ("N", 262144.0)]);
        assert_eq!(k, "N=262144,block=256,iters=50");
        assert_eq!(canonical_config(&k).unwrap(), k);
        let k = config_key([("dtype", " fp16 "), ("N", "4096.0")]);
        assert_eq!(k, "N=4096,dtype=fp16");
        assert_eq!(config_key([("block", 1024u64)]), "block=1024");
        assert_eq!(config_key(Vec::<(&str, f64)>::new()), "");
        assert_eq!(config_key([("x", 0.1 + 0.2)]), "x=0.30000000000000004");
        assert_eq!(
            canonical_config("x=0.30000000000000004").unwrap(),
            "x=0.30000000000000004"
        );
    }

    /// An integer keeps its digits (through f64, 2^53 + 1 became 2^53) and reads
    /// as the same number however it is written.
    #[test]
    fn integers_keep_their_digits() {
        assert_eq!(
            canonical_config("n=9007199254740993").unwrap(),
            "n=9007199254740993"
        );
        assert_eq!(canonical_config("n=007,m=+5,k=-0").unwrap(), "k=0,m=5,n=7");
        assert_eq!(canonical_config("n=-12").unwrap(), "n=-12");
        assert_eq!(
            canonical_config("n=7.0").unwrap(),
            canonical_config("n=7").unwrap()
        );
    }
}
