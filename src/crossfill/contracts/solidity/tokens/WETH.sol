// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {SafeTransfer} from "../lib/SafeTransfer.sol";
import {ERC20} from "./ERC20.sol";

/// @notice Wrapped ether: 1 WETH per wei deposited, redeemable at any time.
contract WETH is ERC20 {
    event Deposit(address indexed account, uint256 amount);
    event Withdrawal(address indexed account, uint256 amount);

    constructor() ERC20("Wrapped Ether", "WETH", 18) {}

    function deposit() public payable {
        _mint(msg.sender, msg.value);
        emit Deposit(msg.sender, msg.value);
    }

    function withdraw(uint256 amount) external {
        _burn(msg.sender, amount);
        emit Withdrawal(msg.sender, amount);
        SafeTransfer.sendNative(msg.sender, amount);
    }

    receive() external payable {
        deposit();
    }
}
