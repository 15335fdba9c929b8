//! `--size` (and a study's `size`): `auto` or bytes per loop device, parsed once by clap.

use bakeoff_core::units::parse_size;

/// `--size` (or a study's `size`), parsed once: `auto` (sized to the dataset, see
/// [`device_size`]) or bytes per device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoopSize {
    /// Each stack sized to hold its dataset.
    #[default]
    Auto,
    /// Each loop device this many bytes.
    Bytes(u64),
}

impl LoopSize {
    /// `auto` or a size (`1g`, `512m`): clap's value parser for `--size`.
    pub fn parse(text: &str) -> Result<LoopSize, String> {
        match text {
            "auto" => Ok(LoopSize::Auto),
            _ => parse_size(text).map(LoopSize::Bytes),
        }
    }

    /// The bytes given, or `None` for `auto`.
    pub fn bytes(self) -> Option<u64> {
        match self {
            LoopSize::Auto => None,
            LoopSize::Bytes(b) => Some(b),
        }
    }
}

/// clap's parser for `--size`: a bad value is echoed clipped, as every bad value is (clap's
/// own message would repeat all of it).
#[derive(Clone, Copy)]
pub struct LoopSizeParser;

impl clap::builder::TypedValueParser for LoopSizeParser {
    type Value = LoopSize;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<LoopSize, clap::Error> {
        let text = value.to_string_lossy();
        let flag = arg.map_or("--size".to_string(), |a| {
            format!("--{}", a.get_long().unwrap_or("size"))
        });
        LoopSize::parse(&text).map_err(|m| {
            let said = crate::exit::bad_value(&flag, &text, &m).error;
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{said}\n"))
                .with_cmd(cmd)
        })
    }
}

impl std::fmt::Display for LoopSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoopSize::Auto => f.write_str("auto"),
            LoopSize::Bytes(b) => write!(f, "{b}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{LoopSize, LoopSizeParser};
    use clap::builder::TypedValueParser;

    #[test]
    fn size_is_parsed_once_into_auto_or_bytes() {
        let cmd = clap::Command::new("bakeoff");
        let parse = |t: &str| LoopSizeParser.parse_ref(&cmd, None, std::ffi::OsStr::new(t));
        assert_eq!(parse("auto").unwrap(), LoopSize::Auto);
        assert_eq!(parse("1g").unwrap(), LoopSize::Bytes(1 << 30));
        assert_eq!(LoopSize::Bytes(1 << 30).bytes(), Some(1 << 30));
        assert_eq!(
            LoopSize::parse(&LoopSize::Bytes(5).to_string()),
            Ok(LoopSize::Bytes(5))
        );
        let bad = parse("bogus").unwrap_err().to_string();
        assert!(bad.contains("--size: 'bogus' is not a size"), "{bad}");
    }
}
