//! The one rule for every URL a server or an authorization server names:
//! which of them may be fetched, posted to or opened in a browser.
//!
//! A URL is judged by its scheme, the class of its host ([`HostClass`])
//! and where the MCP server that led to it is (its [`UrlPolicy`]):
//!
//! - only `https` and `http`; every other scheme (`javascript:`, `file:`,
//!   `data:`, `ftp:`, `ws:`) is refused;
//! - `http` only to a loopback host, and only when the server is itself on
//!   loopback: an authorization-server endpoint is https (the MCP
//!   authorization spec), and a local test or development setup may use
//!   plain http on the user's own machine;
//! - a public host is allowed from anywhere; a host of another class only
//!   when the server is of that same class, and private hosts also from a
//!   loopback server. So a server that is not on loopback never sends us
//!   to a loopback or link-local address (`169.254.169.254`, `fe80::/10`),
//!   a public server never to a private-use one (`10/8`, `192.168/16`,
//!   `fc00::/7`), and a local server may still name a remote https
//!   authorization server. Link-local hosts are refused even from a
//!   loopback server: the cloud metadata service lives there and no
//!   authorization server does.
//!
//! The class is read from the URL only; names are not resolved. A public
//! name that resolves to a private address is therefore judged public:
//! names under `localhost` are loopback, `.local` names link-local (mDNS),
//! and single-label names and the `.internal`, `.lan` and `.home.arpa`
//! suffixes private. IPv4 addresses inside IPv6 ones (IPv4-mapped,
//! IPv4-compatible and NAT64 `64:ff9b::/96`) are judged as the IPv4 address
//! they carry, and the unspecified addresses as loopback, which is where a
//! connection to them goes.
//!
//! URLs the user configured (an `authServerMetadataUrl`) are judged with
//! [`UrlPolicy::user`]: the user is trusted as a server on their own machine
//! is, so https anywhere except link-local hosts, and http on loopback. The
//! endpoints such a document names are judged from where the document is
//! ([`UrlPolicy::for_server`] of its URL): a remote document still cannot
//! send us to loopback.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// What kind of network a host is on, as far as its URL tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HostClass {
    /// The user's own machine: `127.0.0.0/8`, `::1`, the unspecified
    /// addresses, `localhost` and names under it.
    Loopback,
    /// The local link: `169.254.0.0/16` (where cloud metadata services
    /// answer), `fe80::/10`, `.local` names.
    LinkLocal,
    /// Private-use and other non-public ranges (`10/8`, `172.16/12`,
    /// `192.168/16`, `100.64/10`, `fc00::/7`, multicast, reserved), and
    /// names only a local resolver knows (single labels, `.internal`,
    /// `.lan`, `.home.arpa`).
    Private,
    /// Anything else.
    Public,
}

impl HostClass {
    /// The class of `url`'s host; a URL without a host is judged public,
    /// the class with the fewest permissions.
    pub fn of(url: &Url) -> HostClass {
        match url.host() {
            Some(Host::Ipv4(ip)) => HostClass::of_ipv4(ip),
            Some(Host::Ipv6(ip)) => HostClass::of_ipv6(ip),
            Some(Host::Domain(name)) => HostClass::of_name(name),
            None => HostClass::Public,
        }
    }

    fn of_ipv4(ip: Ipv4Addr) -> HostClass {
        let [a, b, ..] = ip.octets();
        if ip.is_loopback() || a == 0 {
            HostClass::Loopback
        } else if ip.is_link_local() {
            HostClass::LinkLocal
        } else if ip.is_private()
            // shared address space (carrier-grade NAT, tailnets)
            || (a == 100 && (64..128).contains(&b))
            // benchmarking
            || (a == 198 && (18..20).contains(&b))
            || ip.is_multicast()
            || ip.is_broadcast()
            // reserved for future use
            || a >= 240
        {
            HostClass::Private
        } else {
            HostClass::Public
        }
    }

    fn of_ipv6(ip: Ipv6Addr) -> HostClass {
        let s = ip.segments();
        let embedded = if s[..5] == [0; 5] && matches!(s[5], 0 | 0xffff) {
            // IPv4-compatible (`::a.b.c.d`, `::1` and `::` among them) and
            // IPv4-mapped (`::ffff:a.b.c.d`).
            Some(s)
        } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
            // NAT64: a connection reaches the IPv4 address it carries.
            Some(s)
        } else {
            None
        };
        if let Some(s) = embedded {
            let [hi, lo] = [s[6], s[7]];
            let v4 = Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
            return HostClass::of_ipv4(v4);
        }
        match s[0] {
            x if x & 0xffc0 == 0xfe80 => HostClass::LinkLocal,
            // unique local, deprecated site-local, multicast
            x if x & 0xfe00 == 0xfc00 || x & 0xffc0 == 0xfec0 || x & 0xff00 == 0xff00 => {
                HostClass::Private
            }
            _ => HostClass::Public,
        }
    }

    fn of_name(name: &str) -> HostClass {
        // The url crate lowercases names; a trailing dot names the same host.
        let name = name.strip_suffix('.').unwrap_or(name);
        let under = |suffix: &str| {
            name == suffix
                || name
                    .strip_suffix(suffix)
                    .is_some_and(|rest| rest.ends_with('.'))
        };
        if under("localhost") {
            HostClass::Loopback
        } else if under("local") {
            HostClass::LinkLocal
        } else if !name.contains('.') || under("internal") || under("lan") || under("home.arpa") {
            HostClass::Private
        } else {
            HostClass::Public
        }
    }
}

impl fmt::Display for HostClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HostClass::Loopback => "loopback",
            HostClass::LinkLocal => "link-local",
            HostClass::Private => "private-use",
            HostClass::Public => "public",
        })
    }
}

/// Why [`UrlPolicy::decide`] refused a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The text is not a URL.
    NotAUrl,
    /// A scheme other than `https` and `http`.
    Scheme(String),
    /// A URL without a host.
    NoHost,
    /// A host of a class the server may not send us to.
    HostClass {
        /// The URL's host class.
        host: HostClass,
        /// Where the server is.
        server: HostClass,
    },
    /// `http` where only `https` is allowed.
    PlainHttp,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotAUrl => f.write_str("not a url"),
            Refusal::Scheme(scheme) => {
                write!(f, "scheme `{scheme}` is not allowed; only https is")
            }
            Refusal::NoHost => f.write_str("it names no host"),
            Refusal::HostClass { host, server } => write!(
                f,
                "a {server} server may not send us to a {host} address"
            ),
            Refusal::PlainHttp => f.write_str(
                "plain http is allowed only on loopback, and only for a server on loopback; use https",
            ),
        }
    }
}

/// Judges URLs named by a server (or by an authorization server it named)
/// from where that server is. See the module documentation for the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UrlPolicy {
    server: HostClass,
}

impl UrlPolicy {
    /// The policy for URLs named by a server of class `server`.
    pub fn new(server: HostClass) -> UrlPolicy {
        UrlPolicy { server }
    }

    /// The policy for URLs named by the server at `server_url`.
    pub fn for_server(server_url: &Url) -> UrlPolicy {
        UrlPolicy::new(HostClass::of(server_url))
    }

    /// The policy for URLs the user configured: trusted as a server on
    /// the user's own machine is.
    pub fn user() -> UrlPolicy {
        UrlPolicy::new(HostClass::Loopback)
    }

    /// Where the server this policy judges for is.
    pub fn server(&self) -> HostClass {
        self.server
    }

    /// Whether `url` may be requested or opened.
    pub fn decide(&self, url: &Url) -> Result<(), Refusal> {
        let scheme = url.scheme();
        if !matches!(scheme, "https" | "http") {
            return Err(Refusal::Scheme(scheme.to_owned()));
        }
        if url.host().is_none() {
            return Err(Refusal::NoHost);
        }
        let host = HostClass::of(url);
        let class_allowed = host == HostClass::Public
            || host == self.server
            || (host == HostClass::Private && self.server == HostClass::Loopback);
        if !class_allowed {
            return Err(Refusal::HostClass {
                host,
                server: self.server,
            });
        }
        if scheme == "http" && !(host == HostClass::Loopback && self.server == HostClass::Loopback)
        {
            return Err(Refusal::PlainHttp);
        }
        Ok(())
    }

    /// Parses `raw` and decides on it.
    pub fn check(&self, raw: &str) -> Result<Url, Refusal> {
        let url = Url::parse(raw).map_err(|_| Refusal::NotAUrl)?;
        self.decide(&url)?;
        Ok(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use HostClass::{LinkLocal, Loopback, Private, Public};

    const ALL: [HostClass; 4] = [Loopback, LinkLocal, Private, Public];

    /// What the policy says about `url` for a server of each class, in the
    /// order of [`ALL`]: `Ok(())` or the refusal.
    #[track_caller]
    fn check(url: &str, class: Option<HostClass>, expect: [Result<(), Refusal>; 4]) {
        if let (Some(class), Ok(parsed)) = (class, Url::parse(url)) {
            assert_eq!(HostClass::of(&parsed), class, "class of {url}");
        }
        for (server, want) in ALL.into_iter().zip(expect) {
            assert_eq!(
                UrlPolicy::new(server).check(url).map(|_| ()),
                want,
                "{url} named by a {server} server"
            );
        }
    }

    fn class(host: HostClass, server: HostClass) -> Result<(), Refusal> {
        Err(Refusal::HostClass { host, server })
    }

    const OK: Result<(), Refusal> = Ok(());
    const HTTP: Result<(), Refusal> = Err(Refusal::PlainHttp);

    #[test]
    fn https_by_host_class_and_server_location() {
        for url in [
            "https://127.0.0.1:8443/token",
            "https://127.9.9.9/",
            "https://[::1]/",
            "https://0.0.0.0/",
            "https://[::]/",
            "https://[::ffff:127.0.0.1]/",
            "https://[::ffff:7f00:2]/",
            "https://localhost/",
            "https://LOCALHOST./",
            "https://auth.localhost/",
            "https://0x7f.1/",
            "https://2130706433/",
        ] {
            check(
                url,
                Some(Loopback),
                [
                    OK,
                    class(Loopback, LinkLocal),
                    class(Loopback, Private),
                    class(Loopback, Public),
                ],
            );
        }
        for url in [
            "https://169.254.169.254/latest/meta-data/",
            "https://169.254.0.1/",
            "https://[fe80::1]/",
            "https://[febf::1]/",
            "https://[::ffff:169.254.169.254]/",
            "https://[::ffff:a9fe:a9fe]/",
            "https://[64:ff9b::a9fe:a9fe]/",
            "https://printer.local/",
        ] {
            check(
                url,
                Some(LinkLocal),
                [
                    class(LinkLocal, Loopback),
                    OK,
                    class(LinkLocal, Private),
                    class(LinkLocal, Public),
                ],
            );
        }
        for url in [
            "https://10.0.0.1/",
            "https://172.16.5.4/",
            "https://172.31.255.255/",
            "https://192.168.1.1/",
            "https://100.64.0.1/",
            "https://198.18.0.1/",
            "https://224.0.0.1/",
            "https://255.255.255.255/",
            "https://[fd00::1]/",
            "https://[fc00::1]/",
            "https://[fec0::1]/",
            "https://[ff02::1]/",
            "https://[::ffff:10.1.2.3]/",
            "https://[::ffff:192.168.0.1]/",
            "https://intranet/",
            "https://metadata.google.internal/",
            "https://router.lan/",
            "https://nas.home.arpa/",
        ] {
            check(
                url,
                Some(Private),
                [OK, class(Private, LinkLocal), OK, class(Private, Public)],
            );
        }
        for url in [
            "https://as.example.com/token",
            "https://8.8.8.8/",
            "https://172.32.0.1/",
            "https://100.128.0.1/",
            "https://[2001:db8::1]/",
            "https://[2606:4700::1111]/",
            "https://localhost.example.com/",
            "https://notlocalhost.example/.well-known/x",
            "https://example.local.example.com/",
            "https://xn--e1afmkfd.example/",
        ] {
            check(url, Some(Public), [OK, OK, OK, OK]);
        }
    }

    #[test]
    fn plain_http_only_on_loopback_for_a_loopback_server() {
        for url in [
            "http://127.0.0.1:9/token",
            "http://localhost:3000/authorize",
            "http://[::1]:8080/register",
            "http://[::ffff:127.0.0.1]/",
        ] {
            check(
                url,
                Some(Loopback),
                [
                    OK,
                    class(Loopback, LinkLocal),
                    class(Loopback, Private),
                    class(Loopback, Public),
                ],
            );
        }
        for url in ["http://169.254.169.254/", "http://[fe80::1]/"] {
            check(
                url,
                Some(LinkLocal),
                [
                    class(LinkLocal, Loopback),
                    HTTP,
                    class(LinkLocal, Private),
                    class(LinkLocal, Public),
                ],
            );
        }
        for url in [
            "http://10.0.0.1/",
            "http://192.168.1.1/register",
            "http://[fd00::1]/",
        ] {
            check(
                url,
                Some(Private),
                [
                    HTTP,
                    class(Private, LinkLocal),
                    HTTP,
                    class(Private, Public),
                ],
            );
        }
        for url in [
            "http://as.example.com/token",
            "http://8.8.8.8/register",
            "HTTP://AS.EXAMPLE.COM/.well-known/oauth-authorization-server",
        ] {
            check(url, Some(Public), [HTTP, HTTP, HTTP, HTTP]);
        }
    }

    #[test]
    fn other_schemes_and_non_urls_are_refused_everywhere() {
        let scheme = |s: &str| Err(Refusal::Scheme(s.into()));
        for (url, refusal) in [
            ("javascript:alert(document.cookie)//", scheme("javascript")),
            ("JavaScript:alert(1)", scheme("javascript")),
            ("file:///etc/passwd", scheme("file")),
            ("file://localhost/etc/passwd", scheme("file")),
            ("data:text/html,<script>alert(1)</script>", scheme("data")),
            ("vbscript:msgbox", scheme("vbscript")),
            ("ftp://127.0.0.1/token", scheme("ftp")),
            ("ws://127.0.0.1/", scheme("ws")),
            ("wss://as.example.com/", scheme("wss")),
            ("x-mcp://as/authorize", scheme("x-mcp")),
            ("/relative/token", Err(Refusal::NotAUrl)),
            ("", Err(Refusal::NotAUrl)),
            ("https://", Err(Refusal::NotAUrl)),
            ("https://[::1", Err(Refusal::NotAUrl)),
        ] {
            check(
                url,
                None,
                [refusal.clone(), refusal.clone(), refusal.clone(), refusal],
            );
        }
    }

    #[test]
    fn the_user_is_trusted_as_a_local_server_is() {
        for (url, want) in [
            ("https://as.example.com/m", OK),
            ("https://10.0.0.1/m", OK),
            ("http://127.0.0.1:5/m", OK),
            ("http://localhost:5/m", OK),
            ("http://as.example.com/m", HTTP),
            ("https://169.254.169.254/m", class(LinkLocal, Loopback)),
            ("file:///m", Err(Refusal::Scheme("file".into()))),
        ] {
            assert_eq!(UrlPolicy::user().check(url).map(|_| ()), want, "{url}");
        }
    }

    #[test]
    fn refusals_say_why() {
        for (refusal, text) in [
            (Refusal::NotAUrl, "not a url"),
            (
                Refusal::Scheme("javascript".into()),
                "scheme `javascript` is not allowed; only https is",
            ),
            (Refusal::NoHost, "it names no host"),
            (
                Refusal::HostClass {
                    host: LinkLocal,
                    server: Public,
                },
                "a public server may not send us to a link-local address",
            ),
            (
                Refusal::PlainHttp,
                "plain http is allowed only on loopback, and only for a server on loopback; use https",
            ),
        ] {
            assert_eq!(refusal.to_string(), text);
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics_and_never_allows_another_scheme(raw in "\\PC{0,60}") {
            for server in ALL {
                if let Ok(url) = UrlPolicy::new(server).check(&raw) {
                    proptest::prop_assert!(matches!(url.scheme(), "https" | "http"));
                }
            }
        }
    }
}
