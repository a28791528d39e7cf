// The privileged helper's vocabulary (its requests and replies, the session
// cgroup names, the nftables ruleset it loads) is a module of its own, so
// carrel-privileged links that and not the Desk; everything that imports
// CarrelCore still sees it.
@_exported import CarrelHelperRequests
