// The protocol's vocabulary (features, enforcement, reasons, lock state,
// version) is CarrelWire's, the same values the compositor uses; apps see it
// through AssessmentKit.
@_exported import CarrelWire

/// Who keeps a denied feature off during a session
/// (`carrel_assessment_manager_v1.enforcement`): `.compositor`, or `.client`,
/// meaning an app that leaves the feature denied must keep it off in its own
/// windows for the whole session (e.g. its own spell checker).
public typealias AssessmentEnforcement = AssessmentFeature.Enforcement

/// Whether any client's session is pending or active
/// (`carrel_assessment_manager_v1.lock_state`). A hint, not a promise:
/// another client may begin in the meantime.
public typealias AssessmentLockState = LockState
