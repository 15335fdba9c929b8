//! `/proc/cpuinfo`: the CPU model.

/// The CPU model name: the first `model name` (x86, most others), else `Hardware`, `cpu model`
/// or `Processor` (older ARM, MIPS) value. `None` when none is present or it is empty.
pub fn parse_cpu_model(text: &str) -> Option<String> {
    const KEYS: [&str; 4] = ["model name", "Hardware", "cpu model", "Processor"];
    let value_of = |wanted: &str| {
        text.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == wanted).then(|| value.trim().to_string())
        })
    };
    KEYS.iter()
        .find_map(|key| value_of(key).filter(|v| !v.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_captured_fixture() {
        let text = include_str!("../../tests/fixtures/proc/6.18.44/cpuinfo");
        assert_eq!(
            parse_cpu_model(text).as_deref(),
            Some("Intel(R) Xeon(R) Processor @ 2.50GHz")
        );
    }

    #[test]
    fn other_architectures_and_garbage() {
        assert_eq!(
            parse_cpu_model("processor\t: 0\nHardware\t: BCM2835\n").as_deref(),
            Some("BCM2835")
        );
        assert_eq!(parse_cpu_model(""), None);
        assert_eq!(parse_cpu_model("model name\t:   \n"), None);
        assert_eq!(parse_cpu_model(":::\n\0"), None);
    }
}
