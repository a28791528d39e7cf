// The vocabularies other programs share are modules of their own, so those
// programs link them and not the Desk: the control protocol (carrelctl), the
// journal entry format and the metrics file format. Everything that imports
// CarrelCore still sees them.
@_exported import CarrelControlProtocol
@_exported import CarrelJournalFormat
@_exported import CarrelMetricsFormat
