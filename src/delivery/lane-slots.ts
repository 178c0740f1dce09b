/**
 * The delivery lanes running in one worker process, per company, shared by core and monitoring
 * lanes. A company may always run `lanesPerCompany` lanes (a quarter of the process's slots). It
 * may run more only while a quarter of the slots stays free, so a lane of any other company finds
 * a slot at once: one busy tenant uses an idle worker fully, yet a tenant with many dead receivers
 * never holds the slots everyone else needs, whatever the delivery timeout.
 */
/**
 * Delivery jobs one webhooks worker process runs at once (its BullMQ concurrency). Each is one
 * lane turn, waiting on one receiver most of the time.
 */
export const deliverySlotsPerProcess = 64;

export const lanesPerCompany = deliverySlotsPerProcess / 4;

export class LaneSlots {
  private readonly held = new Map<string, number>();
  private running = 0;

  /** Takes a slot for a lane of the company, or answers false: the lane must ask again later. */
  tryTake(companyId: string): boolean {
    const held = this.held.get(companyId) ?? 0;
    if (held >= lanesPerCompany && this.running >= deliverySlotsPerProcess - lanesPerCompany) return false;
    this.held.set(companyId, held + 1);
    this.running += 1;
    return true;
  }

  release(companyId: string): void {
    const left = (this.held.get(companyId) ?? 1) - 1;
    if (left === 0) this.held.delete(companyId);
    else this.held.set(companyId, left);
    this.running -= 1;
  }
}
