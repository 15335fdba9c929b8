//! The figures a study page's prose quotes, and whether each is in the page's generated
//! blocks (issue 26: "prose may interpret, but every number it quotes is in a generated
//! table").
//!
//! A figure is a number that reads as a measurement: one with a decimal point or a thousands
//! separator, one with a per cent sign after it or a × before it, or a whole number from 100
//! to 999. Small whole numbers (3 repetitions, 32 readers, 8 KiB) are counts and settings;
//! four or more digits without a separator are names (2014, a 7320 appliance), as bakeoff
//! prints every figure from 1,000 up with one; and names glued to digits (ext4, p99, seed000,
//! 8k, 2026-11-28, 00:14) are not figures.
//!
//! Not prose, so not checked: the generated blocks themselves, fenced and inline code
//! (commands and their output), HTML comments, link targets, text in double quotes (a
//! verbatim quote of the seed or of bakeoff's output), and a table's columns whose header
//! starts with "seed" (the seed's own figures, quoted beside ours).

/// A figure the prose quotes: its line (1-based) and its text.
#[derive(Debug, PartialEq, Eq)]
pub struct Figure {
    pub line: usize,
    pub text: String,
}

/// The figures of `prose` (a page with its generated blocks blanked out) that `generated`
/// (the text of those blocks) does not contain.
pub fn unsupported(prose: &str, generated: &str) -> Vec<Figure> {
    quoted_figures(prose)
        .into_iter()
        .filter(|f| !generated.contains(&f.text))
        .collect()
}

/// Every figure of `prose`, in order.
pub fn quoted_figures(prose: &str) -> Vec<Figure> {
    let mut found = Vec::new();
    let mut in_fence = false;
    let mut in_comment = false;
    // The columns of the current table that quote the seed.
    let mut seed_columns: Vec<usize> = Vec::new();
    let mut table_row = 0;
    for (n, line) in prose.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let (text, still_open) = without_comments(line, in_comment);
        in_comment = still_open;
        if text.trim_start().starts_with('|') {
            table_row += 1;
            let cells = cells(&text);
            if table_row == 1 {
                seed_columns = (cells.iter().enumerate())
                    .filter(|(_, c)| c.trim().to_lowercase().starts_with("seed"))
                    .map(|(i, _)| i)
                    .collect();
            }
            for (i, cell) in cells.iter().enumerate() {
                if !seed_columns.contains(&i) {
                    found.extend(figures_of(cell, n + 1));
                }
            }
        } else {
            table_row = 0;
            seed_columns.clear();
            found.extend(figures_of(&text, n + 1));
        }
    }
    found
}

/// `line` without its HTML comments; whether a comment is still open at its end.
fn without_comments(line: &str, mut open: bool) -> (String, bool) {
    let mut kept = String::new();
    let mut rest = line;
    loop {
        if open {
            match rest.find("-->") {
                Some(end) => {
                    rest = &rest[end + 3..];
                    open = false;
                }
                None => return (kept, true),
            }
        } else {
            match rest.find("<!--") {
                Some(start) => {
                    kept.push_str(&rest[..start]);
                    rest = &rest[start + 4..];
                    open = true;
                }
                None => {
                    kept.push_str(rest);
                    return (kept, false);
                }
            }
        }
    }
}

/// A table row's cells, without the outer pipes.
fn cells(row: &str) -> Vec<String> {
    let row = row.trim().trim_start_matches('|').trim_end_matches('|');
    row.split('|').map(str::to_string).collect()
}

/// The figures of one piece of prose (a line or a table cell).
fn figures_of(text: &str, line: usize) -> Vec<Figure> {
    let text = without_spans(text);
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.' || chars[i] == ',') {
            i += 1;
        }
        // A sentence's full stop or a list's comma is not the number's.
        let mut end = i;
        while end > start && matches!(chars[end - 1], '.' | ',') {
            end -= 1;
        }
        let token: String = chars[start..end].iter().collect();
        let before = start.checked_sub(1).map(|b| chars[b]);
        if is_figure(&token, before, &chars[end..]) {
            found.push(Figure { line, text: token });
        }
    }
    found
}

/// Whether `token`, after `before` and followed by `rest`, is a figure.
fn is_figure(token: &str, before: Option<char>, rest: &[char]) -> bool {
    let after = rest.first().copied();
    // Names and identifiers: ext4, p99, seed000, 8k, 2x, the parts of dates and times.
    let glued = |c: Option<char>| {
        c.is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ':' | '/' | '=' | '#'))
    };
    if glued(before) || glued(after) {
        return false;
    }
    // 004 (a seed's number), not a figure.
    if token.len() > 1 && token.starts_with('0') && !token.starts_with("0.") {
        return false;
    }
    let percent = rest.iter().copied().find(|c| *c != ' ') == Some('%');
    let times = before == Some('×');
    let whole: Option<u64> = token.parse().ok();
    token.contains(['.', ','])
        || percent
        || times
        || whole.is_some_and(|n| (100..1000).contains(&n))
}

/// `text` with its inline code, link targets and double-quoted passages blanked out.
fn without_spans(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut prev = ' ';
    while let Some(c) = chars.next() {
        let close = match c {
            '`' => Some('`'),
            '"' => Some('"'),
            '“' => Some('”'),
            '(' if prev == ']' => Some(')'),
            _ => None,
        };
        match close {
            Some(close) => {
                for d in chars.by_ref() {
                    if d == close {
                        break;
                    }
                }
                kept.push(' ');
                prev = ' ';
            }
            None => {
                kept.push(c);
                prev = c;
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(prose: &str) -> Vec<String> {
        quoted_figures(prose).into_iter().map(|f| f.text).collect()
    }

    #[test]
    fn measurements_are_figures_and_counts_names_and_dates_are_not() {
        assert_eq!(
            texts("raw did 29,897 read IOPS, ×0.61 of it, 35 % busy, 14.5 bytes, 128 KiB.\n"),
            ["29,897", "0.61", "35", "14.5", "128"]
        );
        assert!(texts(
            "32 readers, 3 repetitions, ext4, p99, seed000, Seed 004, 8k, 2x, on \
             2026-11-28 at 00:14, PostgreSQL 15, a 7320 appliance in 2014.\n"
        )
        .is_empty());
    }

    #[test]
    fn code_comments_links_quotes_and_seed_columns_are_not_prose() {
        let page = "```sh\nbakeoff --size 2.5g\n```\n\
                    run `--set rate=1,500` <!-- 1.25 --> [a](b/1.5.md) \"97,845 IOPS\" 4.5\n\
                    | item | seed | ours |\n|---|---|---|\n| reads | 97,845 | 29,897 |\n\
                    \nafter the table 12.5\n";
        let found = quoted_figures(page);
        assert_eq!(
            found,
            [
                Figure {
                    line: 4,
                    text: "4.5".into()
                },
                Figure {
                    line: 7,
                    text: "29,897".into()
                },
                Figure {
                    line: 9,
                    text: "12.5".into()
                },
            ]
        );
    }

    #[test]
    fn a_figure_missing_from_the_generated_text_is_named() {
        let generated = "| raw | 29,897 | ×0.61- |";
        let missing = unsupported("29,897 and ×0.61, but 0.62\n", generated);
        assert_eq!(
            missing,
            [Figure {
                line: 1,
                text: "0.62".into()
            }]
        );
    }
}
