//! The TCP ports a command's processes listen on, read from `/proc`: the
//! process tree under the command's pid, the socket inodes its processes
//! hold (`/proc/PID/fd`), and the listening sockets of each network
//! namespace they are in (`/proc/PID/net/tcp` and `tcp6`, which show the
//! namespace of that process). A command in a namespace of its own (the
//! sandbox without the network) is also found, so its ports can be
//! forwarded to the host (see `forward`).

// Reads /proc, never the project.
#![allow(clippy::disallowed_methods)]

use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::os::unix::fs::MetadataExt;

/// A TCP port a background command listens on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
pub struct ListeningPort {
    pub port: u16,
    /// Where the window (or a browser) reaches it on 127.0.0.1: the same
    /// port, or another when the host's was taken; absent when it could
    /// not be forwarded out of the command's sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reach_at: Option<u16>,
}

/// A listening socket of the command's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Listener {
    pub port: u16,
    /// On IPv6 (`tcp6`), else IPv4.
    pub v6: bool,
}

/// What one look at `/proc` found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub listeners: Vec<Listener>,
    /// A process of the command's in a network namespace other than ours
    /// (the sandbox's own), if any.
    pub netns_pid: Option<u32>,
}

/// The ports the processes under `pid` (it included) listen on.
pub(crate) fn listening(pid: u32) -> Found {
    let tree = descendants(pid);
    let ours = netns_of("self");
    let mut inodes = HashSet::new();
    // One process per network namespace is enough to read its table.
    let mut namespaces: HashMap<u64, u32> = HashMap::new();
    for &p in &tree {
        inodes.extend(socket_inodes(p));
        if let Some(ns) = netns_of(&p.to_string()) {
            namespaces.entry(ns).or_insert(p);
        }
    }
    let mut found = Found::default();
    let mut listeners = BTreeSet::new();
    for (&ns, &p) in &namespaces {
        if Some(ns) != ours {
            found.netns_pid.get_or_insert(p);
        }
        for (table, v6) in [("tcp", false), ("tcp6", true)] {
            let Ok(text) = fs::read_to_string(format!("/proc/{p}/net/{table}")) else {
                continue;
            };
            for (port, inode) in parse_listening(&text) {
                if inodes.contains(&inode) {
                    listeners.insert(Listener { port, v6 });
                }
            }
        }
    }
    found.listeners = one_per_port(listeners);
    found
}

/// A server on both stacks (`0.0.0.0` and `::`) is one port: listed and
/// forwarded once, through IPv4.
fn one_per_port(listeners: BTreeSet<Listener>) -> Vec<Listener> {
    let mut listeners: Vec<Listener> = listeners.into_iter().collect();
    // Sorted by port, IPv4 first: the IPv6 twin is the one dropped.
    listeners.dedup_by_key(|l| l.port);
    listeners
}

/// The network namespace of `/proc/{who}` as its inode.
fn netns_of(who: &str) -> Option<u64> {
    fs::metadata(format!("/proc/{who}/ns/net"))
        .ok()
        .map(|m| m.ino())
}

/// `pid` and every process under it, from each process's parent in
/// `/proc/PID/stat`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(child) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let Ok(stat) = fs::read_to_string(format!("/proc/{child}/stat")) else {
                continue;
            };
            if let Some(parent) = parent_of(&stat) {
                children.entry(parent).or_default().push(child);
            }
        }
    }
    let mut tree = vec![pid];
    let mut seen = HashSet::from([pid]);
    let mut next = 0;
    while next < tree.len() {
        for &kid in children.get(&tree[next]).into_iter().flatten() {
            if seen.insert(kid) {
                tree.push(kid);
            }
        }
        next += 1;
    }
    tree
}

/// The parent pid in a `/proc/PID/stat` line: the second field after the
/// name, which is in parentheses and may itself hold spaces and `)`.
fn parent_of(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The inodes of the sockets a process holds open.
fn socket_inodes(pid: u32) -> Vec<u64> {
    let Ok(entries) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| fs::read_link(e.path()).ok())
        .filter_map(|target| {
            let name = target.to_str()?;
            name.strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

/// The (port, inode) of each listening socket in a `/proc/net/tcp` or
/// `tcp6` table.
fn parse_listening(table: &str) -> Vec<(u16, u64)> {
    const LISTEN: &str = "0A";
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(3) != Some(&LISTEN) {
                return None;
            }
            let (_, port) = fields.get(1)?.rsplit_once(':')?;
            let port = u16::from_str_radix(port, 16).ok()?;
            let inode = fields.get(9)?.parse().ok()?;
            Some((port, inode))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_on_both_stacks_is_one_port() {
        let found = BTreeSet::from([
            Listener {
                port: 5173,
                v6: true,
            },
            Listener {
                port: 3000,
                v6: false,
            },
            Listener {
                port: 3000,
                v6: true,
            },
        ]);
        assert_eq!(
            one_per_port(found),
            [
                Listener {
                    port: 3000,
                    v6: false
                },
                Listener {
                    port: 5173,
                    v6: true
                },
            ]
        );
    }

    #[test]
    fn a_table_gives_its_listening_sockets_only() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1 0000000000000000 100 0 0 10 0
";
        assert_eq!(parse_listening(table), [(8080, 4242), (22, 99)]);
        let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 777 1 0000000000000000 100 0 0 10 0
";
        assert_eq!(parse_listening(v6), [(3000, 777)]);
    }

    #[test]
    fn the_parent_is_read_past_a_name_with_spaces_and_parentheses() {
        assert_eq!(parent_of("12 (a) b (c) S 7 12 12 0"), Some(7));
        assert_eq!(parent_of("12 (node) R 1 12"), Some(1));
        assert_eq!(parent_of("garbage"), None);
    }

    #[test]
    fn our_own_listener_is_found_in_our_namespace() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let found = listening(std::process::id());
        assert!(
            found.listeners.contains(&Listener { port, v6: false }),
            "{found:?}"
        );
        assert_eq!(found.netns_pid, None);
    }
}
