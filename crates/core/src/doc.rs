//! A TOML document read with the line of every key and value, so that every error can point at
//! the line the user wrote. `toml::Value` drops spans; toml_edit's `ImDocument` keeps them, and
//! this module turns its items into one plain tree (standard and inline tables alike).

use crate::settings::{echo, line_of, Origin, SettingError};

/// Where a document came from: a user's file (errors say `file:line`) or a built-in workload
/// (errors say "default of workload 'slob'": its lines are not the user's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    path: String,
    builtin: Option<String>,
}

impl Place {
    /// A user's file at `path`.
    pub fn file(path: &str) -> Place {
        Place {
            path: path.to_string(),
            builtin: None,
        }
    }

    /// The built-in workload `name`.
    pub fn builtin(name: &str) -> Place {
        Place {
            path: format!("<builtin {name}>"),
            builtin: Some(name.to_string()),
        }
    }

    /// The origin of something written on `line`.
    pub fn at(&self, line: usize) -> Origin {
        match &self.builtin {
            Some(workload) => Origin::Default {
                workload: workload.clone(),
            },
            None => Origin::File {
                path: self.path.clone(),
                line,
            },
        }
    }

    /// True for a user's file.
    pub fn is_file(&self) -> bool {
        self.builtin.is_none()
    }
}

/// A value of the tree.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime(String),
    Array(Vec<Node>),
    Table(Table),
}

/// A value and the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub value: Value,
    pub line: usize,
}

/// One `key = value` of a table, with the line of its key.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub key: String,
    pub line: usize,
    pub node: Node,
}

/// A table (standard, inline or the document's root) in the order written.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct Table {
    pub entries: Vec<Entry>,
    pub line: usize,
}

/// Parses `text`; a syntax error names the file and line.
pub(crate) fn parse(text: &str, place: &Place) -> Result<Table, SettingError> {
    let doc = toml_edit::ImDocument::parse(text).map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(text, s.start));
        let message = e.message().trim_end().to_string();
        SettingError::new(place.at(line), "syntax", message)
    })?;
    let newlines = text.match_indices('\n').map(|(i, _)| i).collect();
    Ok(Reader { newlines }.table(doc.as_table(), 1))
}

struct Reader {
    /// Byte offsets of the text's newlines: a span's line is a binary search away.
    newlines: Vec<usize>,
}

impl Reader {
    fn line(&self, span: Option<std::ops::Range<usize>>, fallback: usize) -> usize {
        span.map_or(fallback, |s| {
            self.newlines.partition_point(|&n| n < s.start) + 1
        })
    }

    fn table(&self, t: &toml_edit::Table, fallback: usize) -> Table {
        let pairs = t.iter().filter_map(|(k, _)| t.get_key_value(k));
        self.entries(t.span(), fallback, pairs)
    }

    fn inline(&self, t: &toml_edit::InlineTable, fallback: usize) -> Table {
        let pairs = t.iter().filter_map(|(k, _)| t.get_key_value(k));
        self.entries(t.span(), fallback, pairs)
    }

    fn entries<'t>(
        &self,
        span: Option<std::ops::Range<usize>>,
        fallback: usize,
        pairs: impl Iterator<Item = (&'t toml_edit::Key, &'t toml_edit::Item)>,
    ) -> Table {
        let line = self.line(span, fallback);
        let entries = pairs
            .map(|(key, item)| self.entry(key, item, line))
            .collect();
        Table { entries, line }
    }

    fn entry(&self, key: &toml_edit::Key, item: &toml_edit::Item, fallback: usize) -> Entry {
        let node = self.item(item, fallback);
        Entry {
            key: key.get().to_string(),
            line: self.line(key.span(), node.line),
            node,
        }
    }

    fn item(&self, item: &toml_edit::Item, fallback: usize) -> Node {
        match item {
            toml_edit::Item::Value(v) => self.value(v, fallback),
            toml_edit::Item::Table(t) => {
                let table = self.table(t, fallback);
                let line = table.line;
                Node {
                    value: Value::Table(table),
                    line,
                }
            }
            toml_edit::Item::ArrayOfTables(a) => {
                let line = self.line(a.span(), fallback);
                let items = a
                    .iter()
                    .map(|t| {
                        let table = self.table(t, line);
                        Node {
                            line: table.line,
                            value: Value::Table(table),
                        }
                    })
                    .collect();
                Node {
                    value: Value::Array(items),
                    line,
                }
            }
            toml_edit::Item::None => Node {
                value: Value::Table(Table::default()),
                line: fallback,
            },
        }
    }

    fn value(&self, v: &toml_edit::Value, fallback: usize) -> Node {
        let line = self.line(v.span(), fallback);
        let value = match v {
            toml_edit::Value::String(s) => Value::Str(s.value().clone()),
            toml_edit::Value::Integer(i) => Value::Int(*i.value()),
            toml_edit::Value::Float(f) => Value::Float(*f.value()),
            toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
            toml_edit::Value::Datetime(d) => Value::Datetime(d.value().to_string()),
            toml_edit::Value::Array(a) => {
                Value::Array(a.iter().map(|v| self.value(v, line)).collect())
            }
            toml_edit::Value::InlineTable(t) => Value::Table(self.inline(t, line)),
        };
        Node { value, line }
    }
}

impl Value {
    /// What kind of value this is, for messages ("expected a string, found a table").
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Int(_) => "a whole number",
            Value::Float(_) => "a number with a fraction",
            Value::Bool(_) => "a boolean",
            Value::Datetime(_) => "a date",
            Value::Array(_) => "a list",
            Value::Table(_) => "a table",
        }
    }
}

impl Node {
    /// The table this node is, if it is one.
    pub fn table(&self) -> Option<&Table> {
        match &self.value {
            Value::Table(t) => Some(t),
            _ => None,
        }
    }

    /// A scalar as the text the unit parsers read (`8k`, `32`, `true`); `None` for lists,
    /// tables and dates.
    pub fn text(&self) -> Option<String> {
        match &self.value {
            Value::Str(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
}

impl Entry {
    /// An error about this entry; `label` names it (`role.reader.bs`).
    pub fn error(&self, place: &Place, label: &str, message: impl Into<String>) -> SettingError {
        SettingError::new(place.at(self.line), label, message)
    }

    /// Refuses a value of the wrong kind.
    pub fn wrong_kind(&self, place: &Place, label: &str, expected: &str) -> SettingError {
        let found = self.node.value.kind();
        self.error(place, label, format!("expected {expected}, found {found}"))
    }

    /// The value as scalar text (string, number or boolean).
    pub fn scalar(&self, place: &Place, label: &str) -> Result<String, SettingError> {
        self.node.text().ok_or_else(|| {
            self.wrong_kind(place, label, "a single value (text, number or boolean)")
        })
    }

    /// The value as a string.
    pub fn string(&self, place: &Place, label: &str) -> Result<String, SettingError> {
        match &self.node.value {
            Value::Str(s) => Ok(s.clone()),
            _ => Err(self.wrong_kind(place, label, "a string")),
        }
    }

    /// The value as a table.
    pub fn table(&self, place: &Place, label: &str) -> Result<&Table, SettingError> {
        match &self.node.value {
            Value::Table(t) => Ok(t),
            _ => Err(self.wrong_kind(place, label, "a table")),
        }
    }

    /// The items of a list of `expected` (`"tables"`), each taken by `take`; an item it does
    /// not take is refused at its own line.
    pub fn items<'a, T>(
        &'a self,
        place: &Place,
        label: &str,
        expected: &str,
        take: impl Fn(&'a Node) -> Option<T>,
    ) -> Result<Vec<T>, SettingError> {
        let list = match &self.node.value {
            Value::Array(items) => items,
            _ => return Err(self.wrong_kind(place, label, &format!("a list of {expected}"))),
        };
        list.iter()
            .map(|n| {
                take(n).ok_or_else(|| {
                    let found = n.value.kind();
                    let message = format!("expected a list of {expected}, found {found} in it");
                    SettingError::new(place.at(n.line), label, message)
                })
            })
            .collect()
    }
}

impl Table {
    /// The entry for `key`.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// Refuses the first key not in `allowed`, at its line, naming what is allowed.
    /// `section` prefixes the key in the message (`role.reader`).
    pub fn refuse_unknown(
        &self,
        place: &Place,
        section: &str,
        allowed: &[&str],
    ) -> Result<(), SettingError> {
        match self
            .entries
            .iter()
            .find(|e| !allowed.contains(&e.key.as_str()))
        {
            None => Ok(()),
            Some(e) => {
                let mut names = allowed.to_vec();
                names.sort_unstable();
                names.dedup();
                Err(e.error(
                    place,
                    &join_key(section, &e.key),
                    format!("unknown key (allowed: {})", names.join(", ")),
                ))
            }
        }
    }
}

/// `section.key`, or `key` at the top level. Long keys are shortened for messages.
pub(crate) fn join_key(section: &str, key: &str) -> String {
    if section.is_empty() {
        echo(key).into_owned()
    } else {
        format!("{section}.{}", echo(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_and_value_has_its_line() {
        let text = "a = 1\n\n[t]\nb = \"x\"\n[[r]]\nname = \"one\"\nsteps = [\n  { io = \"read\" },\n  { hog = 5 },\n]\n";
        let doc = parse(text, &Place::file("f.toml")).unwrap();
        assert_eq!(doc.get("a").unwrap().line, 1);
        let t = doc.get("t").unwrap();
        assert_eq!(t.node.line, 3);
        let Value::Table(t) = &t.node.value else {
            panic!()
        };
        assert_eq!(t.get("b").unwrap().line, 4);
        let Value::Array(roles) = &doc.get("r").unwrap().node.value else {
            panic!()
        };
        let Value::Table(role) = &roles[0].value else {
            panic!()
        };
        assert_eq!(role.line, 5);
        let Value::Array(steps) = &role.get("steps").unwrap().node.value else {
            panic!()
        };
        let Value::Table(hog) = &steps[1].value else {
            panic!()
        };
        assert_eq!((steps[1].line, hog.get("hog").unwrap().line), (9, 9));
    }

    #[test]
    fn syntax_errors_name_file_and_line() {
        let e = parse("a = 1\nb = = 2\n", &Place::file("bad.toml")).unwrap_err();
        assert_eq!(e.origin.to_string(), "bad.toml:2");
        let e = parse("a = 1\na = 2\n", &Place::file("dup.toml")).unwrap_err();
        assert_eq!(e.origin.to_string(), "dup.toml:2", "{e}");
    }
}
