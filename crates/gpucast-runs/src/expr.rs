//! A tiny arithmetic expression evaluator (suite manifest sizes, workload formulas).
//!
//! Grammar: numbers (integer, decimal, `1e6`), variables (`N`, `rows`, ...),
//! `+ - * /` (real division), `%` (remainder), `^` (power, right-assoc), unary
//! minus, parentheses, and functions `ceil(x)`, `floor(x)`, `cdiv(a,b)` (= ceil(a/b)),
//! `min(a,b)`, `max(a,b)`, `log2(x)`, `sqrt(x)`. Values are f64 (exact for the
//! integer sizes used here, up to 2^53).
use std::collections::BTreeMap;

pub type Env = BTreeMap<String, f64>;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Op(char),
    LParen,
    RParen,
    Comma,
}

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == '.' || b[i] == '_') {
                i += 1;
            }
            if i < b.len() && (b[i] == 'e' || b[i] == 'E') {
                i += 1;
                if i < b.len() && (b[i] == '+' || b[i] == '-') {
                    i += 1;
                }
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let t: String = b[st..i].iter().filter(|c| **c != '_').collect();
            out.push(Tok::Num(
                t.parse().map_err(|_| format!("bad number '{t}'"))?,
            ));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(b[st..i].iter().collect()));
        } else {
            out.push(match c {
                '+' | '-' | '*' | '/' | '%' | '^' => Tok::Op(c),
                '(' => Tok::LParen,
                ')' => Tok::RParen,
                ',' => Tok::Comma,
                _ => return Err(format!("unexpected character '{c}'")),
            });
            i += 1;
        }
    }
    Ok(out)
}

struct P<'a> {
    t: Vec<Tok>,
    i: usize,
    env: &'a Env,
}

impl P<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.t.get(self.i).cloned();
        self.i += 1;
        t
    }
    fn expect(&mut self, want: Tok) -> Result<(), String> {
        match self.next() {
            Some(t) if t == want => Ok(()),
            other => Err(format!("expected {want:?}, found {other:?}")),
        }
    }
    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.prod()?;
        while let Some(Tok::Op(c @ ('+' | '-'))) = self.peek().cloned() {
            self.i += 1;
            let r = self.prod()?;
            v = if c == '+' { v + r } else { v - r };
        }
        Ok(v)
    }
    fn prod(&mut self) -> Result<f64, String> {
        let mut v = self.unary()?;
        while let Some(Tok::Op(c @ ('*' | '/' | '%'))) = self.peek().cloned() {
            self.i += 1;
            let r = self.unary()?;
            v = match c {
                '*' => v * r,
                '/' => {
                    if r == 0.0 {
                        return Err("division by zero".into());
                    }
                    v / r
                }
                _ => {
                    if r == 0.0 {
                        return Err("remainder by zero".into());
                    }
                    v % r
                }
            };
        }
        Ok(v)
    }
    fn unary(&mut self) -> Result<f64, String> {
        if let Some(Tok::Op('-')) = self.peek() {
            self.i += 1;
            return Ok(-self.unary()?);
        }
        if let Some(Tok::Op('+')) = self.peek() {
            self.i += 1;
            return self.unary();
        }
        self.power()
    }
    fn power(&mut self) -> Result<f64, String> {
        let b = self.atom()?;
        if let Some(Tok::Op('^')) = self.peek() {
            self.i += 1;
            let e = self.unary()?;
            return Ok(b.powf(e));
        }
        Ok(b)
    }
    fn atom(&mut self) -> Result<f64, String> {
        match self.next() {
            Some(Tok::Num(v)) => Ok(v),
            Some(Tok::LParen) => {
                let v = self.sum()?;
                self.expect(Tok::RParen)?;
                Ok(v)
            }
            Some(Tok::Ident(name)) => {
                if let Some(Tok::LParen) = self.peek() {
                    self.i += 1;
                    let mut args = vec![self.sum()?];
                    while let Some(Tok::Comma) = self.peek() {
                        self.i += 1;
                        args.push(self.sum()?);
                    }
                    self.expect(Tok::RParen)?;
                    call(&name, &args)
                } else {
                    self.env
                        .get(&name)
                        .copied()
                        .ok_or_else(|| format!("unknown variable '{name}'"))
                }
            }
            other => Err(format!("unexpected token {other:?}")),
        }
    }
}

fn call(name: &str, a: &[f64]) -> Result<f64, String> {
    let arity = |n: usize| {
        if a.len() == n {
            Ok(())
        } else {
            Err(format!("{name}() takes {n} argument(s), got {}", a.len()))
        }
    };
    match name {
        "ceil" => arity(1).map(|_| a[0].ceil()),
        "floor" => arity(1).map(|_| a[0].floor()),
        "sqrt" => arity(1).map(|_| a[0].sqrt()),
        "log2" => arity(1).map(|_| a[0].log2()),
        "cdiv" => {
            arity(2)?;
            if a[1] == 0.0 {
                return Err("cdiv by zero".into());
            }
            Ok((a[0] / a[1]).ceil())
        }
        "min" => arity(2).map(|_| a[0].min(a[1])),
        "max" => arity(2).map(|_| a[0].max(a[1])),
        _ => Err(format!("unknown function '{name}'")),
    }
}

/// Evaluate `src` with variables from `env`.
pub fn eval(src: &str, env: &Env) -> Result<f64, String> {
    let t = lex(src)?;
    if t.is_empty() {
        return Err("empty expression".into());
    }
    let mut p = P { t, i: 0, env };
    let v = p.sum()?;
    if p.i != p.t.len() {
        return Err(format!("trailing input in '{src}'"));
    }
    if !v.is_finite() {
        return Err(format!("'{src}' is not finite"));
    }
    Ok(v)
}

/// Variables an expression refers to (for manifest validation).
pub fn variables(src: &str) -> Result<Vec<String>, String> {
    let t = lex(src)?;
    let mut v = Vec::new();
    for (i, tok) in t.iter().enumerate() {
        if let Tok::Ident(n) = tok {
            if t.get(i + 1) != Some(&Tok::LParen) && !v.contains(n) {
                v.push(n.clone());
            }
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    fn env(p: &[(&str, f64)]) -> Env {
        p.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }
    #[test]
    fn arithmetic_and_precedence() {
        let e = env(&[("N", 1000.0)]);
        assert_eq!(eval("1 + 2 * 3", &e).unwrap(), 7.0);
        assert_eq!(eval("(1 + 2) * 3", &e).unwrap(), 9.0);
        assert_eq!(eval("-2^2", &e).unwrap(), -4.0);
        assert_eq!(eval("2^3^2", &e).unwrap(), 512.0);
        assert_eq!(eval("12*N", &e).unwrap(), 12000.0);
        assert_eq!(eval("N % 7", &e).unwrap(), 6.0);
        assert_eq!(eval("1e3 + 1_000", &e).unwrap(), 2000.0);
        assert_eq!(eval("7/2", &e).unwrap(), 3.5);
    }
    #[test]
    fn functions() {
        let e = env(&[("N", 262145.0), ("n", 2048.0)]);
        assert_eq!(eval("ceil(N/256)", &e).unwrap(), 1025.0);
        assert_eq!(eval("cdiv(N, 512)", &e).unwrap(), 513.0);
        assert_eq!(eval("floor(N/256)", &e).unwrap(), 1024.0);
        assert_eq!(eval("min(3, max(1, 2))", &e).unwrap(), 2.0);
        assert_eq!(eval("2*n^3", &e).unwrap(), 17179869184.0);
        assert_eq!(eval("log2(n)", &e).unwrap(), 11.0);
    }
    #[test]
    fn errors() {
        let e = Env::new();
        assert!(eval("x + 1", &e)
            .unwrap_err()
            .contains("unknown variable 'x'"));
        assert!(eval("1 +", &e).is_err());
        assert!(eval("(1", &e).is_err());
        assert!(eval("1 2", &e).is_err());
        assert!(eval("1/0", &e).is_err());
        assert!(eval("foo(1)", &e).is_err());
        assert!(eval("", &e).is_err());
        assert!(eval("1 $ 2", &e).is_err());
    }
    #[test]
    fn lists_variables() {
        assert_eq!(
            variables("cdiv(W, 16) * rows + W").unwrap(),
            vec!["W", "rows"]
        );
    }
}
