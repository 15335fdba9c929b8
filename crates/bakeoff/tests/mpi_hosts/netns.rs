//! Hosts made of network namespaces, for `mpirun` across them on one machine: a head namespace
//! (`…-h0`, where `mpirun` runs) holding a bridge, and N hosts (`…-h1` …), each a namespace with
//! its own address on the bridge through a veth pair, `lo` up, a hostname of its own (its
//! namespace's name) and an `/etc/hosts` naming every host (`ip netns exec` binds
//! `/etc/netns/NAME/hosts` over it). OpenMPI starts its daemon on a host through an rsh agent
//! the cluster writes: it enters the host's namespace and a new UTS namespace instead of
//! logging in with ssh. Mounts are the machine's (each `ip netns exec` has a mount namespace of
//! its own that follows the root one), so a file system mounted before the run is every host's
//! target. Everything is removed on drop, also when a test panics: the namespaces' processes
//! killed, the namespaces (and with them the veth pairs and the bridge) deleted.

use bakeoff_testkit::command::{quiet, sh};
use bakeoff_testkit::scratch_dir;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The hosts' subnet (every address in it lives in the cluster's namespaces, none in the root
/// one), and the head's address on the bridge.
const SUBNET: &str = "10.213.0.0/24";
const HEAD_ADDRESS: &str = "10.213.0.1/24";

/// OpenMPI's daemon-to-`mpirun` connections probe an idle peer after 1 s, each second, and
/// give up after 3 missed probes: a host whose link is cut is noticed within seconds. With
/// OpenMPI's defaults (300 s idle, 9 probes 20 s apart) `mpirun` waited for it for minutes
/// (docs/mpi.md).
const KEEPALIVE: [&str; 6] = [
    "oob_tcp_keepalive_time",
    "1",
    "oob_tcp_keepalive_intvl",
    "1",
    "oob_tcp_keepalive_probes",
    "3",
];

/// N hosts and the head namespace, removed on drop.
pub struct Cluster {
    /// The head namespace, where `mpirun` runs.
    head: String,
    /// The hosts' names: each is its namespace's name, its hostname and its name in the
    /// hostfile.
    pub hosts: Vec<String>,
    /// The agent, the hostfile and the hosts files' directories.
    dir: tempfile::TempDir,
}

impl Cluster {
    /// `n` hosts; `before[i]`, when given, is a shell command the agent runs on host `i`
    /// (0-based) inside its namespace before OpenMPI's daemon starts there (a mount only that
    /// host sees).
    pub fn new(n: usize, before: &[(usize, String)]) -> Cluster {
        static MADE: AtomicU32 = AtomicU32::new(0);
        let prefix = format!(
            "bko-{}-{}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed)
        );
        let cluster = Cluster {
            head: format!("{prefix}-h0"),
            hosts: (1..=n).map(|i| format!("{prefix}-h{i}")).collect(),
            dir: scratch_dir(),
        };
        // Each namespace's /etc/hosts before the namespace exists: nothing is left for the
        // drop to miss if a step below fails.
        let mut hosts_file = format!("127.0.0.1 localhost\n{} {}\n", address(0), cluster.head);
        for (i, host) in cluster.hosts.iter().enumerate() {
            hosts_file += &format!("{} {host}\n", address(i + 1));
        }
        for ns in cluster.namespaces() {
            let etc = etc_dir(&ns);
            std::fs::create_dir_all(&etc).unwrap();
            std::fs::write(etc.join("hosts"), &hosts_file).unwrap();
        }
        cluster.make_network();
        cluster.write_agent(before);
        let hostfile: String = (cluster.hosts.iter())
            .map(|h| format!("{h} slots=2\n"))
            .collect();
        std::fs::write(cluster.dir.path().join("hostfile"), hostfile).unwrap();
        cluster
    }

    /// The head and every host.
    fn namespaces(&self) -> Vec<String> {
        std::iter::once(self.head.clone())
            .chain(self.hosts.iter().cloned())
            .collect()
    }

    /// The head's bridge, and each host's veth pair onto it with the host's address.
    fn make_network(&self) {
        let head = self.head.as_str();
        sh("ip", &["netns", "add", head]);
        sh("ip", &["-n", head, "link", "set", "lo", "up"]);
        sh("ip", &["-n", head, "link", "add", "br0", "type", "bridge"]);
        sh(
            "ip",
            &["-n", head, "addr", "add", HEAD_ADDRESS, "dev", "br0"],
        );
        sh("ip", &["-n", head, "link", "set", "br0", "up"]);
        for (i, host) in self.hosts.iter().enumerate() {
            let port = format!("port{}", i + 1);
            let cidr = format!("{}/24", address(i + 1));
            sh("ip", &["netns", "add", host]);
            sh("ip", &["-n", host, "link", "set", "lo", "up"]);
            let peer = ["peer", "name", &port, "netns", head];
            sh(
                "ip",
                &[
                    &["-n", host, "link", "add", "eth0", "type", "veth"],
                    &peer[..],
                ]
                .concat(),
            );
            sh("ip", &["-n", head, "link", "set", &port, "master", "br0"]);
            sh("ip", &["-n", head, "link", "set", &port, "up"]);
            sh("ip", &["-n", host, "addr", "add", &cidr, "dev", "eth0"]);
            sh("ip", &["-n", host, "link", "set", "eth0", "up"]);
        }
    }

    /// OpenMPI's rsh agent: called as `agent HOST COMMAND...` (what ssh would get), it runs
    /// the command line in HOST's namespace under HOST as hostname, after HOST's `before`.
    fn write_agent(&self, before: &[(usize, String)]) {
        let mut cases = String::new();
        for (i, command) in before {
            cases += &format!("    {}) before='{command}' ;;\n", self.hosts[*i]);
        }
        let script = format!(
            "#!/bin/sh\n\
             # OpenMPI's rsh agent for the test's hosts: $1 is a host (a network namespace of\n\
             # that name), the rest the command line its remote shell would run.\n\
             host=$1; shift\n\
             before=:\n\
             case $host in\n{cases}esac\n\
             exec ip netns exec \"$host\" unshare --uts sh -c \\\n    \
             'hostname \"$0\" && eval \"$1\" && exec sh -c \"$2\"' \"$host\" \"$before\" \"$*\"\n"
        );
        let agent = self.agent();
        std::fs::write(&agent, script).unwrap();
        sh("chmod", &["+x", agent.to_str().unwrap()]);
    }

    fn agent(&self) -> PathBuf {
        self.dir.path().join("agent")
    }

    /// The hostfile (`HOST slots=2` per host).
    pub fn hostfile(&self) -> PathBuf {
        self.dir.path().join("hostfile")
    }

    /// `mpirun -np NP` in the head namespace, ranks placed round-robin over the hosts
    /// (`--map-by node`: rank r on host r mod N), as root, unbound, its daemons started by the
    /// agent and talking over the hosts' subnet.
    pub fn mpirun(&self, np: u32) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.head, "mpirun"])
            .args([
                "--allow-run-as-root",
                "--oversubscribe",
                "--bind-to",
                "none",
            ])
            .args(["--map-by", "node", "-np", &np.to_string()])
            .arg("--hostfile")
            .arg(self.hostfile())
            .args(["--mca", "plm_rsh_agent"])
            .arg(self.agent())
            // mpirun starts every daemon itself (no daemon starts others).
            .args(["--mca", "plm_rsh_no_tree_spawn", "1"])
            .args(["--mca", "oob_tcp_if_include", SUBNET])
            .args(["--mca", "btl_tcp_if_include", SUBNET]);
        for pair in KEEPALIVE.chunks(2) {
            cmd.args(["--mca", pair[0], pair[1]]);
        }
        cmd
    }

    /// Cuts host `i`'s link (0-based): its end of the veth pair goes down.
    pub fn cut(&self, i: usize) {
        sh("ip", &["-n", &self.hosts[i], "link", "set", "eth0", "down"]);
    }

    /// The processes in host `i`'s namespace.
    pub fn pids_on(&self, i: usize) -> Vec<u32> {
        pids_in(&self.hosts[i])
    }

    /// Every process in the cluster's namespaces, with its namespace.
    pub fn processes(&self) -> Vec<(String, u32)> {
        (self.namespaces().into_iter())
            .flat_map(|ns| pids_in(&ns).into_iter().map(move |p| (ns.clone(), p)))
            .collect()
    }

    /// Waits up to `limit` for the namespaces to hold no process; what is still there.
    pub fn settle(&self, limit: Duration) -> Vec<(String, u32)> {
        let deadline = Instant::now() + limit;
        loop {
            let left = self.processes();
            if left.is_empty() || Instant::now() > deadline {
                return left;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Kill what is left (a daemon on a cut host outlives the job), then delete.
        for _ in 0..50 {
            let left = self.processes();
            if left.is_empty() {
                break;
            }
            for (_, pid) in left {
                quiet("kill", &["-KILL", &pid.to_string()]);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        for ns in self.namespaces() {
            quiet("ip", &["netns", "del", &ns]);
            let _ = std::fs::remove_dir_all(etc_dir(&ns));
        }
        // /etc/netns itself, when no other namespace has files there.
        let _ = std::fs::remove_dir("/etc/netns");
    }
}

/// Host `i`'s address (0: the head).
fn address(i: usize) -> String {
    if i == 0 {
        HEAD_ADDRESS.trim_end_matches("/24").to_string()
    } else {
        format!("10.213.0.{}", 10 + i)
    }
}

/// Files `ip netns exec NS` binds over `/etc`.
fn etc_dir(ns: &str) -> PathBuf {
    PathBuf::from("/etc/netns").join(ns)
}

/// The processes in namespace `ns` (none if it is gone).
fn pids_in(ns: &str) -> Vec<u32> {
    let out = Command::new("ip").args(["netns", "pids", ns]).output();
    let text = out.map(|o| o.stdout).unwrap_or_default();
    (String::from_utf8_lossy(&text).split_whitespace())
        .filter_map(|p| p.parse().ok())
        .collect()
}
