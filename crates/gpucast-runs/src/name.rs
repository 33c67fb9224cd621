//! [`Name`]: an immutable, shared string for a run's GPU, kernel and configuration.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A run's GPU, kernel or configuration: text shared between the rows that repeat it
/// (a table names a few GPUs and kernels, and each configuration once per GPU), so a
/// row holds a pointer rather than its own string. Reads as a `&str`: compares with
/// strings, hashes and orders as its text.
///
/// Measured against a `String` per row (2 cores): `predict` on the 980k-row GEMM
/// corpus 2.87 -> 2.63 s at a 869 -> 742 MiB peak; LOGO analytical on 1M rows x 12
/// GPUs 5.29 -> 4.93 s at 1,431 -> 1,207 MB; 100k-row analytical predictions
/// 595k -> 670k/s (a GPU's and a kernel's name are read from one place, not from
/// wherever each row's copy was).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(Arc<str>);

impl Name {
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// True when both are the same shared string (not only equal text).
    pub fn ptr_eq(a: &Name, b: &Name) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

/// The empty name, made once (a default run names nothing, and a loader fills in
/// runs made from the default by the million).
impl Default for Name {
    fn default() -> Name {
        static EMPTY: std::sync::OnceLock<Name> = std::sync::OnceLock::new();
        EMPTY.get_or_init(|| Name(Arc::from(""))).clone()
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        Name(s.into())
    }
}

impl From<String> for Name {
    fn from(s: String) -> Name {
        Name(s.into())
    }
}

impl From<&String> for Name {
    fn from(s: &String) -> Name {
        Name(s.as_str().into())
    }
}

impl From<Arc<str>> for Name {
    fn from(s: Arc<str>) -> Name {
        Name(s)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        *self == *other.0
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        **self == *other.0
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        **self == *other.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_reads_compares_and_orders_as_its_text() {
        let (a, b) = (
            Name::from("NVIDIA TITAN V"),
            Name::from("NVIDIA A100".to_string()),
        );
        let text = String::from("NVIDIA TITAN V");
        assert_eq!(a, "NVIDIA TITAN V");
        assert_eq!("NVIDIA TITAN V", a);
        assert_eq!(a, text);
        assert_eq!(text, a);
        assert_ne!(a, b);
        assert!(b < a && a.as_str().starts_with("NVIDIA"));
        assert_eq!(
            (a.to_string(), format!("{a:?}")),
            (
                "NVIDIA TITAN V".to_string(),
                "\"NVIDIA TITAN V\"".to_string()
            )
        );
        let set: std::collections::HashSet<Name> = [a.clone()].into();
        assert!(set.contains("NVIDIA TITAN V"));
        assert!(Name::ptr_eq(&a, &a.clone()) && !Name::ptr_eq(&a, &Name::from("NVIDIA TITAN V")));
        assert_eq!(Name::default(), "");
    }
}
