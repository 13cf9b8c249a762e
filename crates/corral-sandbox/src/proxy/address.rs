//! The addresses the proxy never connects to, whatever name led there:
//! this computer, the local network and the cloud's metadata services.
//! A name on the allowlist that resolves to one of them is refused (a
//! hostile or hijacked name pointing at `127.0.0.1` must not turn the
//! proxy into a way into the host).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is refused, or `None` when the proxy may connect to it.
pub(crate) fn refused(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

/// IPv4 ranges refused: `(first address, prefix length, why)`.
const REFUSED_V4: &[([u8; 4], u8, &str)] = &[
    ([0, 0, 0, 0], 8, "an unspecified address"),
    ([10, 0, 0, 0], 8, "a private address"),
    ([100, 64, 0, 0], 10, "a shared (carrier-grade NAT) address"),
    ([127, 0, 0, 0], 8, "a loopback address"),
    (
        [169, 254, 0, 0],
        16,
        "a link-local or cloud metadata address",
    ),
    ([172, 16, 0, 0], 12, "a private address"),
    // Protocol assignments; one cloud's metadata service lives here.
    ([192, 0, 0, 0], 24, "a reserved or cloud metadata address"),
    ([192, 168, 0, 0], 16, "a private address"),
    ([198, 18, 0, 0], 15, "a benchmarking address"),
    ([224, 0, 0, 0], 4, "a multicast address"),
    ([240, 0, 0, 0], 4, "a reserved or broadcast address"),
];

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    REFUSED_V4.iter().find_map(|(first, len, why)| {
        let mask = u32::MAX.checked_shl(32 - u32::from(*len)).unwrap_or(0);
        (bits & mask == u32::from_be_bytes(*first) & mask).then_some(*why)
    })
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    // Forms that carry an IPv4 address are judged by that address:
    // v4-mapped `::ffff:a.b.c.d`, v4-compatible `::a.b.c.d`, NAT64
    // `64:ff9b::a.b.c.d` and 6to4 `2002:AABB:CCDD::`.
    let low_v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if ip.is_unspecified() {
        return Some("an unspecified address");
    }
    if ip.is_loopback() {
        return Some("a loopback address");
    }
    if s[..5] == [0; 5] && s[5] == 0xffff {
        return refused_v4(low_v4);
    }
    if s[..6] == [0; 6] {
        return Some("an IPv4-compatible address (deprecated)");
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return refused_v4(low_v4);
    }
    if s[0] == 0x2002 {
        let embedded = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return refused_v4(embedded);
    }
    match s[0] {
        0xfc00..=0xfdff => Some("a unique local (private) address"),
        0xfe80..=0xfebf => Some("a link-local address"),
        0xfec0..=0xfeff => Some("a site-local address"),
        0xff00..=0xffff => Some("a multicast address"),
        // Teredo hides the address it reaches.
        0x2001 if s[1] == 0 => Some("a Teredo address"),
        0x0100 if s[1..4] == [0, 0, 0] => Some("a discard address"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_private_and_metadata_addresses_are_refused_in_every_form() {
        for refused_ip in [
            "0.0.0.0",
            "127.0.0.1",
            "127.1.2.3",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.100.100.200",
            "192.0.0.192",
            "224.0.0.1",
            "239.255.255.250",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "fd00:ec2::254",
            "fc00::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:0:4136:e378::1",
            "100::1",
        ] {
            let ip: IpAddr = refused_ip.parse().unwrap();
            assert!(refused(ip).is_some(), "{refused_ip} should be refused");
        }
    }

    #[test]
    fn public_addresses_are_allowed() {
        for allowed in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "198.51.100.7",
            "192.0.2.1",
            "2606:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            let ip: IpAddr = allowed.parse().unwrap();
            assert_eq!(refused(ip), None, "{allowed}");
        }
    }
}
