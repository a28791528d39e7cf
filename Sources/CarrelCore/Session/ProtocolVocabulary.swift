// The protocol's enums (features, enforcement, reasons, lock state, version)
// live once in CarrelWire; Core's users see them as Core's own names.
@_exported import CarrelWire
