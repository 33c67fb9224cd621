//! Finding a GPU by the names people and drivers use: matched, never guessed.
//!
//! [`Catalog::resolve`] accepts, in order, the first step with exactly one GPU: the
//! exact name; an exact alias (e.g. the name the CUDA driver reports); the name or an
//! alias ignoring case; the normalized name ([`normalize_name`]: letters and digits
//! only, without a leading "NVIDIA", "GeForce" or "Tesla", words that never tell two
//! GPUs apart). So "RTX 4090", "geforce_rtx_4070", "a100-sxm4-40gb" and "H200" (an
//! alias) resolve; "Quadro" stays, since "Quadro RTX 6000" and "RTX 6000 Ada" are two
//! boards.
//!
//! Every step compares names after Unicode NFKC normalisation, and a name with a
//! character GPU names are not written with ([`super::glyphs`]: after NFKC, anything
//! but printable ASCII) resolves to none: matching ignores what is not a letter or a
//! digit, so a Cyrillic "Т" or a zero-width space would otherwise vanish and leave
//! another GPU's name. Its error names the character and the GPU the name looks like.
//!
//! A name that only resembles a GPU resolves to none. [`Catalog::resolve_or_err`] then
//! says why, in one line: every GPU whose name holds all of the query's words is listed
//! as a candidate when there are several ("RTX 6000", "A100", "4090": use more of the
//! name); otherwise the error lists close names: GPUs sharing a word with the query or
//! differing from one of its model numbers in one digit ("Quadro RTX 5000" suggests the
//! RTX A5000 and is not it), never unrelated ones. Words are split at every change
//! between letters and digits and at every other character ("A100-SXM4-80GB" -> a 100
//! sxm 4 80 gb), brand words (nvidia, geforce, tesla, quadro, rtx, gtx) aside, except
//! one that ends the name after a model word ("TITAN RTX" -> titan rtx).

use super::glyphs;
use super::{Catalog, Gpu};
use crate::error::{Error, GpuHint, Result};

/// Words that say who makes or markets a GPU, not which GPU it is.
const BRAND_WORDS: [&str; 6] = ["nvidia", "geforce", "tesla", "quadro", "rtx", "gtx"];

/// The most candidates an error lists.
const MAX_CANDIDATES: usize = 8;

/// Lower-case, keep letters and digits only, drop a leading "nvidia", "geforce" or
/// "tesla" (never "quadro": it tells boards apart).
pub fn normalize_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    loop {
        let mut stripped = false;
        for p in ["nvidia", "geforce", "tesla"] {
            if s.len() > p.len() && s.starts_with(p) {
                s = s[p.len()..].to_string();
                stripped = true;
            }
        }
        if !stripped {
            break;
        }
    }
    s
}

/// The tokens of a name without brand words (see the module documentation).
pub fn name_tokens(name: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut cur = String::new();
    let mut prev_digit = None;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                tokens.push(std::mem::take(&mut cur));
            }
            prev_digit = None;
            continue;
        }
        let digit = c.is_ascii_digit();
        if prev_digit.is_some_and(|d| d != digit) && !cur.is_empty() {
            tokens.push(std::mem::take(&mut cur));
        }
        cur.push(c.to_ascii_lowercase());
        prev_digit = Some(digit);
    }
    if !cur.is_empty() {
        tokens.push(cur);
    }
    let brand = |t: &String| BRAND_WORDS.contains(&t.as_str());
    // A brand word that ends a name after a model word is part of the model name
    // ("TITAN RTX" is not "TITAN").
    let model_suffix = match tokens.as_slice() {
        [.., prev, last] if brand(last) && !brand(prev) => tokens.pop(),
        _ => None,
    };
    tokens.retain(|t| !brand(t));
    tokens.extend(model_suffix);
    tokens
}

/// How well a GPU's name or alias matches a query's tokens: None when some query
/// token is missing; otherwise (exact: no extra tokens, extra token count).
fn token_match(query: &[String], name: &str) -> Option<(bool, usize)> {
    let t = name_tokens(name);
    if query.iter().all(|q| t.contains(q)) {
        let extra = t.len().saturating_sub(query.len());
        Some((extra == 0 && t.len() == query.len(), extra))
    } else {
        None
    }
}

/// 'A', 'B', ... (each name quoted).
fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "it matches 'A', 'B' and N more; use more of the name" (at most 8 candidates).
fn ambiguity(gs: &[&Gpu]) -> String {
    let names: Vec<&str> = gs
        .iter()
        .take(MAX_CANDIDATES)
        .map(|g| g.name.as_str())
        .collect();
    let more = gs.len().saturating_sub(MAX_CANDIDATES);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("it matches {}{tail}; use more of the name", quoted(&names))
}

/// One digit's difference between two model numbers of the same length ("4075"
/// and "4070"): related enough to suggest.
fn one_digit_apart(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.len() >= 2
        && a.chars().all(|c| c.is_ascii_digit())
        && b.chars().all(|c| c.is_ascii_digit())
        && a.chars().zip(b.chars()).filter(|(x, y)| x != y).count() == 1
}

/// The result of looking a name up.
enum Lookup<'a> {
    One(&'a Gpu),
    /// Several GPUs match every token, best first.
    Ambiguous(Vec<&'a Gpu>),
    /// A character GPU names are not written with (after NFKC).
    Foreign(char),
    None,
}

impl Catalog {
    /// Finds a GPU by exact name, alias, case-insensitive or normalized name (see the
    /// module documentation). None when nothing matches exactly one GPU.
    pub fn resolve(&self, name: &str) -> Option<&Gpu> {
        match self.lookup(name) {
            Lookup::One(g) => Some(g),
            _ => None,
        }
    }

    /// The spellings that can only mean one GPU: what [`Catalog::resolve`] accepts.
    pub fn resolve_exact(&self, name: &str) -> Option<&Gpu> {
        let q = name.trim();
        if q.is_empty() {
            return None;
        }
        // (every name and alias of a catalog is in the alphabet: an exact hit is one)
        if let Some(g) = self.by_name_or_alias(q) {
            return Some(g);
        }
        let q = glyphs::comparable(q).ok()?;
        let q = q.trim();
        if let Some(g) = self.by_name_or_alias(q) {
            return Some(g);
        }
        if let Some(r) = unique(self.spelled(q)) {
            return r;
        }
        let n = normalize_name(q);
        if n.is_empty() {
            return None;
        }
        let hits: Vec<&Gpu> = self
            .gpus
            .iter()
            .filter(|g| all_names(g).any(|a| normalize_name(a) == n))
            .collect();
        unique(hits).flatten()
    }

    /// The GPUs with `name` (trimmed) as their name or an alias, in any case.
    pub(crate) fn spelled(&self, name: &str) -> Vec<&Gpu> {
        let Ok(name) = glyphs::comparable(name) else {
            return Vec::new();
        };
        let lower = name.trim().to_lowercase();
        self.gpus
            .iter()
            .filter(|g| all_names(g).any(|n| n.to_lowercase() == lower))
            .collect()
    }

    fn lookup(&self, name: &str) -> Lookup<'_> {
        if let Some(g) = self.resolve_exact(name) {
            return Lookup::One(g);
        }
        let name = match glyphs::comparable(name) {
            Ok(n) => n,
            Err(c) => return Lookup::Foreign(c),
        };
        let query = name_tokens(&name);
        if query.is_empty() {
            return Lookup::None;
        }
        // (exact, extra tokens, name) of every GPU matching all query tokens.
        let mut hits: Vec<((bool, usize), &Gpu)> = self
            .gpus
            .iter()
            .filter_map(|g| {
                all_names(g)
                    .filter_map(|n| token_match(&query, n))
                    .min_by_key(|&(exact, extra)| (!exact, extra))
                    .map(|m| (m, g))
            })
            .collect();
        hits.sort_by(|(a, ga), (b, gb)| (!a.0, a.1, &ga.name).cmp(&(!b.0, b.1, &gb.name)));
        // Words alone never pick a GPU: several candidates make the name ambiguous,
        // one is only a close name.
        match hits.len() {
            0 | 1 => Lookup::None,
            _ => Lookup::Ambiguous(hits.into_iter().map(|(_, g)| g).collect()),
        }
    }

    /// Like [`Catalog::resolve`], with a one-line error listing the matching
    /// candidates (at most 8, best first) or close names.
    pub fn resolve_or_err(&self, name: &str) -> Result<&Gpu> {
        match self.lookup(name) {
            Lookup::One(g) => Ok(g),
            Lookup::Ambiguous(gs) => Err(Error::GpuName {
                name: name.to_string(),
                candidates: ambiguity(&gs),
                catalog_gpus: self.gpus.len(),
                close: String::new(),
            }),
            Lookup::Foreign(c) => Err(Error::GpuNameCharacter {
                name: name.to_string(),
                why: self.foreign_hint(name, c),
            }),
            Lookup::None => Err(Error::GpuName {
                name: name.to_string(),
                candidates: String::new(),
                catalog_gpus: self.gpus.len(),
                close: self.close_hint(name),
            }),
        }
    }

    /// Why a name with the character `c`, which GPU names are not written with,
    /// names no GPU: the character (code point, and name where it passes for a
    /// letter or cannot be seen) and the GPU the name looks like, if any.
    pub(crate) fn foreign_hint(&self, name: &str, c: char) -> String {
        let mut foreign: Vec<char> = unicode_form(name)
            .chars()
            .filter(|&x| !glyphs::is_name_char(x))
            .collect();
        foreign.sort_unstable();
        foreign.dedup();
        let more = match foreign.len().saturating_sub(1) {
            0 => String::new(),
            1 => " and 1 other such character".to_string(),
            n => format!(" and {n} other such characters"),
        };
        let looks = glyphs::as_it_looks(name);
        let like = match self.lookup(&looks) {
            Lookup::One(g) => format!("; read as it looks, it is GPU '{}'", g.name),
            Lookup::Ambiguous(gs) => format!("; read as it looks, {}", ambiguity(&gs)),
            _ => self.close_hint(&looks),
        };
        format!(
            "{}{more}: GPU names are written in ASCII letters, digits and punctuation{like}; type the name in ASCII",
            glyphs::describe(c)
        )
    }

    /// Why `name` (which [`Catalog::resolve`] does not resolve) names no GPU, for a
    /// message about a data file: the GPUs it matches when it is ambiguous, else that it
    /// is not in the catalog, with close names.
    pub fn unresolved_hint(&self, name: &str) -> GpuHint {
        if name_tokens(name).is_empty() && name.chars().any(|c| c.is_ascii_alphanumeric()) {
            return GpuHint::Text(format!(
                "only brand words ({}): name the model, e.g. 'RTX 4090' or 'A100 SXM4 40GB'",
                BRAND_WORDS.join(", ")
            ));
        }
        match self.lookup(name) {
            Lookup::Ambiguous(gs) => GpuHint::Ambiguous(ambiguity(&gs)),
            Lookup::Foreign(c) => GpuHint::Character(self.foreign_hint(name, c)),
            _ => GpuHint::NotInCatalog {
                close: self.close_hint(name),
            },
        }
    }

    /// "; close names: 'A', 'B'", or nothing when no GPU is related to `name`.
    fn close_hint(&self, name: &str) -> String {
        let close = self.close_names(name, MAX_CANDIDATES);
        if close.is_empty() {
            return String::new();
        }
        let close: Vec<&str> = close.iter().map(String::as_str).collect();
        format!("; close names: {}", quoted(&close))
    }

    /// Up to `k` GPU names related to a query that matches none: GPUs sharing the
    /// most query tokens, or a model number one digit apart ("4075" -> RTX 4070 ...).
    /// Empty when nothing is related.
    pub fn close_names(&self, name: &str, k: usize) -> Vec<String> {
        let Ok(name) = glyphs::comparable(name) else {
            return Vec::new();
        };
        let query = name_tokens(&name);
        if query.is_empty() {
            return Vec::new();
        }
        let mut scored: Vec<(usize, usize, usize, &str)> = self
            .gpus
            .iter()
            .filter_map(|g| {
                all_names(g)
                    .map(|n| {
                        let t = name_tokens(n);
                        let shared = query.iter().filter(|q| t.contains(q)).count();
                        let near = query
                            .iter()
                            .filter(|q| !t.contains(q) && t.iter().any(|x| one_digit_apart(q, x)))
                            .count();
                        (shared + near, shared, t.len())
                    })
                    .max_by_key(|&(score, shared, len)| (score, shared, std::cmp::Reverse(len)))
                    .filter(|&(score, _, _)| score > 0)
                    .map(|(score, shared, len)| (score, shared, len, g.name.as_str()))
            })
            .collect();
        // Model-number tokens carry the identity: a GPU related only through a
        // word like "laptop" or "gb" is not a suggestion when another shares or
        // nearly shares a number.
        let numeric = |g: &str| {
            let t = name_tokens(g);
            query.iter().any(|q| {
                q.chars().all(|c| c.is_ascii_digit())
                    && t.iter().any(|x| x == q || one_digit_apart(q, x))
            })
        };
        if query.iter().any(|q| q.chars().all(|c| c.is_ascii_digit())) {
            let any_numeric = self.gpus.iter().any(|g| all_names(g).any(numeric));
            if any_numeric {
                scored.retain(|&(_, _, _, n)| {
                    self.gpus
                        .iter()
                        .find(|g| g.name == n)
                        .is_some_and(|g| all_names(g).any(numeric))
                });
            } else {
                scored.clear();
            }
        }
        scored.sort_by(|a, b| (b.0, b.1, a.2, a.3).cmp(&(a.0, a.1, b.2, b.3)));
        scored
            .into_iter()
            .take(k)
            .map(|(_, _, _, n)| n.to_string())
            .collect()
    }
}

/// None: no hit; Some(None): several; Some(Some(g)): exactly one.
fn unique(hits: Vec<&Gpu>) -> Option<Option<&Gpu>> {
    match hits.len() {
        0 => None,
        1 => Some(Some(hits[0])),
        _ => Some(None),
    }
}

/// `name` after NFKC (whatever its characters).
fn unicode_form(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    name.nfkc().collect()
}

fn all_names(g: &Gpu) -> impl Iterator<Item = &str> {
    std::iter::once(g.name.as_str()).chain(g.aliases.iter().map(String::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat() -> Catalog {
        Catalog::builtin()
    }

    #[test]
    fn tokens_and_normal_forms() {
        assert_eq!(
            name_tokens("NVIDIA A100-SXM4-80GB"),
            ["a", "100", "sxm", "4", "80", "gb"]
        );
        assert_eq!(name_tokens("NVIDIA GeForce RTX 4090"), ["4090"]);
        assert_eq!(name_tokens("rtx a4000"), ["a", "4000"]);
        assert_eq!(name_tokens("NVIDIA"), Vec::<String>::new());
        assert_eq!(name_tokens("NVIDIA TITAN RTX"), ["titan", "rtx"]);
        assert_eq!(name_tokens("NVIDIA GeForce"), Vec::<String>::new());
        assert_eq!(normalize_name("NVIDIA GeForce RTX 4070"), "rtx4070");
        assert_eq!(normalize_name("Tesla V100-PCIE-32GB"), "v100pcie32gb");
        assert_eq!(normalize_name("nvidia_a100_sxm4_40gb"), "a100sxm440gb");
        assert_eq!(normalize_name("NVIDIA"), "nvidia");
        assert!(one_digit_apart("4075", "4070"));
        assert!(!one_digit_apart("4075", "4060"));
        assert!(!one_digit_apart("a1", "a2"));
    }

    /// Every name, alias and driver name resolves to its own GPU, and no two GPUs
    /// share a normalized name.
    #[test]
    fn every_gpu_resolves_by_its_names() {
        let c = cat();
        let mut seen: std::collections::HashMap<String, String> = Default::default();
        for g in c.gpus() {
            for n in all_names(g) {
                assert_eq!(c.resolve(n).map(|x| &x.name), Some(&g.name), "{n}");
                assert_eq!(c.resolve_or_err(n).unwrap().name, g.name, "{n}");
                let k = normalize_name(n);
                if let Some(o) = seen.get(&k) {
                    assert_eq!(
                        o, &g.name,
                        "normalized '{k}' names both '{o}' and '{}'",
                        g.name
                    );
                }
                seen.insert(k, g.name.clone());
            }
        }
    }

    /// Every device name in the public data (Kernel Tuner caches, aiconfigurator
    /// GEMM tables, Nsight Compute exports) resolves.
    #[test]
    fn public_data_device_names_resolve() {
        let c = cat();
        for (n, expect) in [
            ("NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce RTX 2080 Ti"),
            (
                "NVIDIA GeForce RTX 3060 Laptop GPU",
                "NVIDIA GeForce RTX 3060 Laptop GPU",
            ),
            ("NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090"),
            ("NVIDIA TITAN RTX", "NVIDIA TITAN RTX"),
            ("TITAN RTX", "NVIDIA TITAN RTX"),
            ("NVIDIA A100-PCIE-40GB", "NVIDIA A100 PCIe 40GB"),
            ("A100-PCIE-40GB", "NVIDIA A100 PCIe 40GB"),
            ("NVIDIA RTX A4000", "NVIDIA RTX A4000"),
            ("NVIDIA RTX A6000", "NVIDIA RTX A6000"),
            ("GeForce GTX 1080 Ti", "NVIDIA GeForce GTX 1080 Ti"),
            ("GeForce GTX TITAN X", "NVIDIA GeForce GTX TITAN X"),
            ("Tesla K20m", "NVIDIA Tesla K20m"),
            ("Tesla P100-PCIE-12GB", "NVIDIA Tesla P100 PCIe 12GB"),
            ("GeForce RTX 2070 SUPER", "NVIDIA GeForce RTX 2070 SUPER"),
            ("Tesla V100-PCIE-32GB", "NVIDIA Tesla V100 PCIe 32GB"),
            ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB"),
            ("NVIDIA B200", "NVIDIA B200"),
            ("NVIDIA B300 SXM6 AC", "NVIDIA B300 SXM6 AC"),
            ("NVIDIA GB200", "NVIDIA GB200"),
            ("NVIDIA GB300", "NVIDIA GB300"),
            ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB"),
            ("NVIDIA H200", "NVIDIA H200 SXM 141GB"),
            ("NVIDIA L40S", "NVIDIA L40S"),
            (
                "NVIDIA RTX PRO 6000 Blackwell Server Edition",
                "NVIDIA RTX PRO 6000 Blackwell Server Edition",
            ),
            ("NVIDIA GeForce GTX 1080", "NVIDIA GeForce GTX 1080"),
            ("NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5090"),
        ] {
            assert_eq!(c.resolve(n).map(|g| g.name.as_str()), Some(expect), "{n}");
        }
    }

    /// Names as people type them: (query, the GPU) or (query, the candidates listed).
    #[test]
    fn name_matching_table() {
        let c = cat();
        let one = |q: &str| {
            c.resolve_or_err(q)
                .map(|g| g.name.clone())
                .unwrap_or_else(|e| panic!("{q}: {e}"))
        };
        for (q, expect) in [
            ("rtx 4090", "NVIDIA GeForce RTX 4090"),
            ("RTX-4070", "NVIDIA GeForce RTX 4070"),
            ("geforce_rtx_4070", "NVIDIA GeForce RTX 4070"),
            ("rtx a4000", "NVIDIA RTX A4000"),
            ("rtx 3060 laptop", "NVIDIA GeForce RTX 3060 Laptop GPU"),
            ("RTX 3060", "NVIDIA GeForce RTX 3060"),
            ("a10", "NVIDIA A10"),
            ("a10g", "NVIDIA A10G"),
            ("h200", "NVIDIA H200 SXM 141GB"),
            ("v100 sxm2 16gb", "NVIDIA Tesla V100 SXM2 16GB"),
            ("h100 sxm5 80gb", "NVIDIA H100 SXM5 80GB"),
            ("a100-sxm4-40gb", "NVIDIA A100 SXM4 40GB"),
            ("a100 pcie 80gb", "NVIDIA A100 PCIe 80GB"),
            ("k80", "NVIDIA Tesla K80"),
            ("k20", "NVIDIA Tesla K20m"),
            ("k20x", "NVIDIA Tesla K20X"),
            ("gtx titan x", "NVIDIA GeForce GTX TITAN X"),
            ("RTX 2070 super", "NVIDIA GeForce RTX 2070 SUPER"),
            ("rtx 2070", "NVIDIA GeForce RTX 2070"),
            ("rtx 6000 ada", "NVIDIA RTX 6000 Ada Generation"),
            ("quadro rtx 6000", "NVIDIA Quadro RTX 6000"),
            ("b300", "NVIDIA B300 SXM6 AC"),
            ("gb200", "NVIDIA GB200"),
        ] {
            assert_eq!(one(q), expect, "{q}");
        }
        let candidates = |q: &str| {
            let e = c.resolve_or_err(q).unwrap_err().to_string();
            assert!(!e.contains('\n'), "{e}");
            assert!(e.contains("ambiguous"), "{q}: {e}");
            e.split('\'')
                .skip(3)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        // "TITAN" is every TITAN, not the TITAN RTX (whose "RTX" is no brand word).
        let titan = candidates("TITAN");
        assert!(
            titan.len() >= 4 && titan.contains(&"NVIDIA TITAN V".to_string()),
            "{titan:?}"
        );
        assert_eq!(one("titan rtx"), "NVIDIA TITAN RTX");
        let a100 = candidates("A100");
        assert_eq!(a100.len(), 4, "{a100:?}");
        assert!(a100.iter().all(|n| n.contains("A100")), "{a100:?}");
        let a100_80 = candidates("a100 80gb");
        assert_eq!(a100_80, ["NVIDIA A100 PCIe 80GB", "NVIDIA A100 SXM4 80GB"]);
        let h100 = candidates("h100");
        assert!(
            h100.len() >= 2 && h100.iter().all(|n| n.contains("H100")),
            "{h100:?}"
        );
        let v100 = candidates("V100");
        assert!(
            v100.len() >= 4 && v100.iter().all(|n| n.contains("V100")),
            "{v100:?}"
        );
        // A name two boards share is theirs to tell apart, not ours to guess.
        let rtx6000 = candidates("RTX 6000");
        assert!(
            rtx6000.contains(&"NVIDIA Quadro RTX 6000".to_string())
                && rtx6000.contains(&"NVIDIA RTX 6000 Ada Generation".to_string())
                && rtx6000.iter().all(|n| n.contains("6000")),
            "{rtx6000:?}"
        );
        for q in ["4090", "2070", "3060 laptop"] {
            assert!(c.resolve(q).is_none(), "{q} resolved");
        }
        // A name that only resembles a GPU is not that GPU.
        for q in ["Quadro RTX 5000", "RTX 5000", "Tesla V100", "A100 80GB"] {
            let e = c.resolve_or_err(q).unwrap_err().to_string();
            assert!(c.resolve(q).is_none(), "{q} resolved");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = c.resolve_or_err("Quadro RTX 5000").unwrap_err().to_string();
        assert!(
            e.contains("unknown GPU 'Quadro RTX 5000'") && e.contains("RTX A5000"),
            "{e}"
        );
        assert_eq!(
            candidates("rtx pro 6000"),
            [
                "NVIDIA RTX PRO 6000 Blackwell Server Edition",
                "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"
            ]
        );
    }

    #[test]
    fn unknown_names_suggest_only_related_gpus() {
        let c = cat();
        let e = c.resolve_or_err("RTX 4075").unwrap_err().to_string();
        assert!(
            e.contains("unknown GPU 'RTX 4075'") && e.contains("close names"),
            "{e}"
        );
        assert!(e.contains("RTX 4070"), "{e}");
        assert!(
            !e.contains("4090") && !e.contains("A100") && !e.contains('\n'),
            "{e}"
        );
        assert!(e.matches("', '").count() < MAX_CANDIDATES, "{e}");
        for q in ["RTX 9999", "banana", "", "NVIDIA"] {
            let e = c.resolve_or_err(q).unwrap_err().to_string();
            assert!(!e.contains("close names"), "{q}: {e}");
            assert!(c.resolve(q).is_none(), "{q}");
        }
    }

    /// A look-alike letter or an invisible character never drops out of a name: the
    /// name resolves to nothing, and the error names the character and the GPU the
    /// name looks like. Full-width letters are ASCII after NFKC.
    #[test]
    fn look_alike_characters_name_no_gpu() {
        let c = cat();
        let cyrillic = "RTX 3090 \u{0422}\u{0456}"; // Cyrillic TE and I
        assert!(c.resolve(cyrillic).is_none());
        assert!(c.resolve_exact(cyrillic).is_none());
        assert!(c.spelled(cyrillic).is_empty());
        assert!(c.close_names(cyrillic, 8).is_empty());
        let e = c.resolve_or_err(cyrillic).unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown GPU 'RTX 3090 \u{0422}\u{0456}': '\u{0422}' (U+0422 CYRILLIC CAPITAL LETTER TE, \
             which looks like the Latin 'T') and 1 other such character: GPU names are written in \
             ASCII letters, digits and punctuation; read as it looks, it is GPU \
             'NVIDIA GeForce RTX 3090 Ti'; type the name in ASCII"
        );
        assert!(matches!(c.unresolved_hint(cyrillic), GpuHint::Character(_)));
        let zero_width = "RTX 3090\u{200B} Ti";
        assert!(c.resolve(zero_width).is_none());
        let hint = c.unresolved_hint(zero_width).to_string();
        assert!(
            hint.contains("an invisible character (U+200B ZERO WIDTH SPACE)")
                && hint.contains("it is GPU 'NVIDIA GeForce RTX 3090 Ti'"),
            "{hint}"
        );
        // Greek capital alpha in a family name: the candidates it looks like
        let hint = c.unresolved_hint("\u{0391}100").to_string();
        assert!(hint.contains("U+0391 GREEK CAPITAL LETTER ALPHA"), "{hint}");
        assert!(
            hint.contains("ambiguous") || hint.contains("matches 'NVIDIA A100"),
            "{hint}"
        );
        // another script, nothing like a GPU
        let hint = c.unresolved_hint("\u{4E2D}\u{6587}").to_string();
        assert!(
            hint.contains("(U+4E2D, a CJK character)") && !hint.contains("GPU '"),
            "{hint}"
        );
        // full-width letters and digits are the ASCII ones
        let full = "\u{FF32}\u{FF34}\u{FF38} \u{FF13}\u{FF10}\u{FF19}\u{FF10} \u{FF34}\u{FF49}";
        assert_eq!(c.resolve(full).unwrap().name, "NVIDIA GeForce RTX 3090 Ti");
        // the look-alike never resolves to the GPU without it
        assert_eq!(
            c.resolve("RTX 3090").unwrap().name,
            "NVIDIA GeForce RTX 3090"
        );
    }

    #[test]
    fn names_that_resolve_alike_are_refused() {
        // SYNTHETIC: two GPUs whose names differ only in punctuation would make each
        // exact spelling pick one and every other spelling of either ambiguous.
        let entry = |name: &str, sms: u32| {
            format!(
                "[[gpu]]\nname = \"{name}\"\nvendor = \"NVIDIA\"\narch = \"Ampere\"\ncompute_capability = \"8.6\"\nsm_count = {sms}\nboost_clock_mhz = 1000.0\nfp32_gflops = 256.0\nmem_bandwidth_gbs = 100.0\nl2_bytes = 1048576\nregs_per_sm = 65536\nmax_threads_per_sm = 1536\nmax_blocks_per_sm = 16\nsmem_per_sm = 102400\nwarp_size = 32\n"
            )
        };
        let text = format!("{}\n{}", entry("Foo X-1", 1), entry("Foo X1", 2));
        let e = Catalog::from_toml_str(&text, "t.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.toml:18:1: name or alias 'Foo X1' of GPU 'Foo X1' is already used by GPU 'Foo X-1'"
        );
    }
}
