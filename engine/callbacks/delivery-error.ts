/** Why a delivery request was refused; engine/api/domain-errors.ts maps each to its envelope code. */
export type DeliveryErrorKind =
  | 'delivery.event_not_found'
  | 'delivery.no_receiver'
  | 'delivery.invalid_mqtt_settings';
