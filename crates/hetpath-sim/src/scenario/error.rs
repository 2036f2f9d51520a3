//! Scenario errors: one line naming the file, the place in it and what was expected.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    /// Where in the file: a line number and/or a table and key, e.g. "link 'sat': rate".
    pub place: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(file: &str, place: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: file.to_string(),
            place: place.into(),
            message: message.into(),
        }
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

impl std::error::Error for ScenarioError {}

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
}
