//! Scenario errors: one line naming the file, the place in it and what was expected.
//! Inside the loader, a `KeyError` names a key relative to the table being checked; the
//! builder prefixes the table's place and the file.

use std::fmt;

/// A scenario that cannot be run, as the user sees it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    pub file: String,
    /// Where in the file: a line number and/or a table and key, e.g. "link 'sat': rate".
    pub place: String,
    pub message: String,
}

/// Something a scenario asks for that runs, but probably not as its author meant (a
/// route longer than IP's TTL): printed beside the results, never in place of them. The
/// same three parts as an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioWarning {
    pub file: String,
    pub place: String,
    pub message: String,
}

impl ScenarioWarning {
    pub fn new(
        file: &str,
        place: impl Into<String>,
        message: impl Into<String>,
    ) -> ScenarioWarning {
        ScenarioWarning {
            file: file.to_string(),
            place: place.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file, self.place, self.message)
    }
}

/// A bad value under a table: its key (dotted, relative to the table) and what was
/// expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct KeyError {
    pub key: String,
    pub message: String,
}

impl KeyError {
    pub fn new(key: impl Into<String>, message: impl fmt::Display) -> KeyError {
        KeyError {
            key: key.into(),
            message: message.to_string(),
        }
    }

    /// The same error one table further out: `key` becomes `outer.key`.
    pub fn under(self, outer: &str) -> KeyError {
        KeyError {
            key: join(outer, &self.key),
            message: self.message,
        }
    }
}

impl ScenarioError {
    pub fn new(file: &str, place: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: file.to_string(),
            place: place.into(),
            message: message.into(),
        }
    }

    /// A `KeyError` under the table at `place` (`place.key: message`).
    pub fn at(file: &str, place: &str, e: KeyError) -> ScenarioError {
        ScenarioError::new(file, join(place, &e.key), e.message)
    }

    /// Converts a TOML/serde error: the line of its span, and the key written just before
    /// the offending value when there is one.
    pub fn from_toml(file: &str, text: &str, e: &toml::de::Error) -> ScenarioError {
        let message = e.message().trim().replace('\n', " ");
        let Some(span) = e.span() else {
            return ScenarioError::new(file, "", message);
        };
        let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
        let place = match key_before(text, span.start) {
            Some(k) if !message.contains(&format!("`{k}`")) => format!("line {line}: {k}"),
            _ => format!("line {line}"),
        };
        ScenarioError::new(file, place, message)
    }
}

/// `outer.key`, or either alone if the other is empty.
fn join(outer: &str, key: &str) -> String {
    match (outer.is_empty(), key.is_empty()) {
        (true, _) => key.to_string(),
        (_, true) => outer.to_string(),
        _ => format!("{outer}.{key}"),
    }
}

/// The bare key of `key = value` when `at` points into the value.
fn key_before(text: &str, at: usize) -> Option<String> {
    let head = &text[..at.min(text.len())];
    let line_start = head.rfind('\n').map_or(0, |i| i + 1);
    let before = head[line_start..].trim_end();
    let before = before.strip_suffix('=')?.trim_end();
    let key: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || *c == '.')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!key.is_empty()).then_some(key)
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.place.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {}: {}", self.file, self.place, self.message)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_key_before_a_value() {
        assert_eq!(
            key_before("a = 1\nrate = \"x\"", 13).as_deref(),
            Some("rate")
        );
        assert_eq!(
            key_before("ch = { model = \"b\", p = 1.5 }", 24).as_deref(),
            Some("p")
        );
        assert_eq!(key_before("[link]", 3), None);
    }

    #[test]
    fn a_key_error_reads_as_one_line_under_its_table() {
        let e = KeyError::new("beta", "1.5 is outside (0, 1)").under("cc");
        let s = ScenarioError::at("x.toml", "flow[0] 'f'", e);
        assert_eq!(
            s.to_string(),
            "x.toml: flow[0] 'f'.cc.beta: 1.5 is outside (0, 1)"
        );
    }
}
