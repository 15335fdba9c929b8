//! The examples that end the help and the man page of the commands whose definitions do not
//! hold their own (the top level, workloads, demo, stack, cleanup).

pub const TOP_EXAMPLES: &str = "\
Examples:
  bakeoff run slob --stack ext4 --set runtime=30s
  bakeoff compare --stack ext4 --stack xfs --workload randread --repeat 3
  bakeoff workloads
  bakeoff man run | man -l -";

pub const WORKLOADS_EXAMPLES: &str = "\
Examples:
  bakeoff workloads
  bakeoff workloads show slob > my-slob.toml    # then: bakeoff run --job my-slob.toml ...
  bakeoff workloads show tpcc";

pub const WORKLOADS_LIST_EXAMPLES: &str = "\
Examples:
  bakeoff workloads list
  bakeoff workloads list | grep recipe
  bakeoff workloads list | cut -d' ' -f1    # the names alone";

pub const WORKLOADS_SHOW_EXAMPLES: &str = "\
Examples:
  bakeoff workloads show randread
  bakeoff workloads show slob > my-slob.toml    # then: bakeoff run --job my-slob.toml ...
  bakeoff workloads show build                  # a recipe";

pub const DEMO_EXAMPLES: &str = "\
Examples:
  bakeoff demo
  bakeoff demo --stack ext4 --stack xfs --runtime 10s
  bakeoff demo --size 4g --set readers=8";

pub const STACK_EXAMPLES: &str = "\
Examples:
  bakeoff stack list
  bakeoff stack create xfs:mount=noatime --keep
  bakeoff stack destroy xfs-4242-1";

pub const STACK_LIST_EXAMPLES: &str = "\
Examples:
  bakeoff stack list
  bakeoff stack list --keys zfs
  bakeoff stack list --keys btrfs";

pub const STACK_DESTROY_EXAMPLES: &str = "\
Examples:
  bakeoff stack destroy xfs-4242-1    # the name `stack create --keep` printed
  bakeoff stack destroy r10
  bakeoff stack destroy r10 && bakeoff cleanup    # and whatever a killed run left";

pub const CLEANUP_EXAMPLES: &str = "\
Examples:
  bakeoff cleanup          # after a killed run: undo what it left
  bakeoff cleanup --all    # also destroy stacks kept with `stack create --keep`
  bakeoff cleanup && losetup -a    # no loop device of bakeoff's left";

pub const CAPTURE_EXAMPLES: &str = "\
Examples:
  bakeoff capture --pid 4711 --under /var/lib/postgresql --duration 10m --out prod.trace
  bakeoff capture --under /srv/db --out t.trace -- ./nightly-batch.sh   # a program that does its own I/O
  bakeoff capture --cgroup /sys/fs/cgroup/db --under data=/srv/db --under log=/srv/wal --out t.trace
  bakeoff run tpcc --stack ext4 --set db=postgres --capture tpcc.trace   # a run of bakeoff's own";

pub const TRACE_EXAMPLES: &str = "\
Examples:
  bakeoff trace show prod.trace              # files, op mix, sizes, syncs, threads, losses
  bakeoff trace show prod.trace --json > prod.json
  bakeoff trace personality prod.trace > mydb.toml && bakeoff run --job mydb.toml --stack xfs";

pub const TRACE_SHOW_EXAMPLES: &str = "\
Examples:
  bakeoff trace show prod.trace              # files, op mix, sizes, syncs, threads, losses
  bakeoff trace show prod.trace --json > prod.json";

pub const TRACE_PERSONALITY_EXAMPLES: &str = "\
Examples:
  bakeoff trace personality prod.trace > mydb.toml
  bakeoff trace personality prod.trace --name mydb > mydb.toml && bakeoff run --job mydb.toml --stack xfs";
